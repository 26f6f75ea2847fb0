"""The ``veracity`` command: a thin click layer over the library.

Each command parses its options, makes one library call and maps library
errors to a clean message and exit status 1 (usage errors exit 2).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from .common import library_errors

F = TypeVar("F", bound=Callable[..., Any])


def _print_json(data: Any) -> None:
    from ..pipeline.render import canonical_json

    click.echo(canonical_json(data), nl=False)


def _table(rows: list[dict[str, Any]], title: str | None = None) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for column in rows[0] if rows else []:
        table.add_column(column)
    for row in rows:
        table.add_row(*(str(value) for value in row.values()))
    import shutil

    Console(width=max(120, shutil.get_terminal_size().columns)).print(table)


@click.group()
@click.version_option(package_name="veracity")
def main() -> None:
    """veracity: warranted answers from governed documents.

    Every answer cites the exact chunk behind each claim, or says what is
    missing (partial), or abstains. Runs offline on the bundled Starship
    Workbench demo: try `veracity ask` and `veracity eval --out out`.
    """


OPERATOR_NOTE = (
    "Operator view: no principal is checked, every document of the demo is shown. "
    "A multi-user service must never expose this; it gets its own principal-checked endpoints."
)


@main.group(epilog=OPERATOR_NOTE)
def docs() -> None:
    """Inspect the catalog (the bundled demo); an operator view, see below."""


@docs.command("list", epilog=OPERATOR_NOTE)
@click.option("--tenant", help="Only this tenant's documents.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def docs_list(tenant: str | None, as_json: bool) -> None:
    """List documents: id, revision, status, versions, validity, visibility, trust (operator view)."""
    from ..pipeline.engine import demo_catalog
    from ..pipeline.render import document_row

    with library_errors():
        rows = [document_row(d) for d in demo_catalog().documents(tenant)]
    if as_json:
        _print_json(rows)
    elif rows:
        _table(rows, title=f"{len(rows)} documents")
    else:
        click.echo(f"no documents for tenant {tenant!r}")


@docs.command("show", epilog=OPERATOR_NOTE)
@click.argument("document_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def docs_show(document_id: str, as_json: bool) -> None:
    """Show one document (source id or 64-hex document id): metadata, digests, chunks (operator view)."""
    from ..pipeline.engine import demo_catalog
    from ..pipeline.render import document_detail

    with library_errors():
        catalog = demo_catalog()
        document = catalog.document(document_id)
        detail = document_detail(document, catalog.chunks(document.document_id))
    if as_json:
        _print_json(detail)
        return
    chunks = detail.pop("chunks")
    facts = detail.pop("facts")
    for key, value in detail.items():
        click.echo(f"{key:>14}: {value}")
    for fact in facts:
        click.echo(f"{'fact':>14}: {fact['id']} ({fact['stance']})")
    _table(
        [
            {
                "#": c["ordinal"],
                "chunk_id": c["chunk_id"][:16],
                "heading_path": " > ".join(c["heading_path"]),
                "offsets": f"{c['start']}–{c['end']}",
                "kind": c["kind"],
                "facts": ", ".join(c["fact_ids"]),
            }
            for c in chunks
        ],
        title=f"{len(chunks)} chunks",
    )


@main.command("chunk", epilog=OPERATOR_NOTE)
@click.argument("document_id")
@click.option(
    "--strategy",
    type=click.Choice(["fixed", "structural", "contextual"]),
    default="structural",
    show_default=True,
)
@click.option("--size", default=400, show_default=True, help="Character budget of a chunk.")
@click.option("--overlap", default=0, show_default=True, help="Overlap of fixed windows.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON with chunk texts.")
def chunk_command(document_id: str, strategy: str, size: int, overlap: int, as_json: bool) -> None:
    """Show how a document splits into chunks, with their text (operator view)."""
    from ..ingest.chunking import chunk_document
    from ..pipeline.engine import demo_catalog
    from ..pipeline.render import chunk_dict

    with library_errors():
        document = demo_catalog().document(document_id)
        chunks = chunk_document(document, strategy, size=size, overlap=overlap)
    if as_json:
        _print_json([chunk_dict(c, text=True) for c in chunks])
        return
    for c in chunks:
        path = " > ".join(c.heading_path) or "(top)"
        click.secho(
            f"── #{c.ordinal} {c.kind.value} [{c.start}:{c.end}] {path} · {c.chunk_id[:12]}"
            + (f" · facts {', '.join(c.fact_ids)}" if c.fact_ids else ""),
            bold=True,
        )
        if c.context_prefix:
            click.secho(f"   prefix: {c.context_prefix}", dim=True)
        click.echo(c.text)


def _parse_as_of(_: click.Context, __: click.Parameter, value: str | None) -> datetime | None:
    if value is None:
        return None
    from ..ingest.documents import parse_moment
    from ..model.errors import ValidationError

    try:
        return parse_moment(value, document="--as-of", field="as_of")
    except ValidationError as exc:
        raise click.BadParameter(str(exc)) from None


@main.command("ask")
@click.argument("question", required=False)
@click.option("--role", help="Role of the asker (demo: public, support, maintainer, security).")
@click.option("--tenant", help="Tenant of the asker (demo: starship).")
@click.option("--version", "target_version", help="Product version the question is about.")
@click.option("--as-of", callback=_parse_as_of, help="Moment of the question, ISO 8601 (UTC if no zone).")
@click.option("--fact", "facts", multiple=True, help="A fact id the answer must cover (repeatable).")
@click.option("--embedder", type=click.Choice(["use", "e5", "fake"]), default=None, help="Dense model.")
@click.option(
    "--kb",
    "kb_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Knowledge base directory (default: the bundled demo, in memory).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--explain", is_flag=True, help="Add the trace: exclusions, candidates, scores, gate.")
@click.option(
    "--view",
    type=click.Choice(["operator", "asker"]),
    default="operator",
    show_default=True,
    help="Trace view with --explain: this local command is an operator's, so it counts the documents "
    "the asker may not see; 'asker' shows only what a service returns to the asker.",
)
def ask_command(
    question: str | None,
    role: str | None,
    tenant: str | None,
    target_version: str | None,
    as_of: datetime | None,
    facts: tuple[str, ...],
    embedder: str | None,
    kb_dir: Path | None,
    as_json: bool,
    explain: bool,
    view: str,
) -> None:
    """Answer QUESTION with citations, a partial answer, or an abstain.

    Without QUESTION it asks the demo's running question. Defaults come from
    the demo tenant (role public, version 3.2, as of 2026-08-27T16:00Z).
    """
    from ..fixtures import tenant_config
    from ..model.contracts import Principal
    from ..pipeline.engine import KnowledgeBase
    from ..pipeline.render import answer_dict, answer_text
    from ..pipeline.trace import Audience

    audience = Audience(view)
    config = tenant_config()
    with library_errors():
        kb = _open_kb(kb_dir, embedder) if kb_dir is not None else _knowledge_base(embedder)
        answer = kb.ask(
            question or config.running_question,
            Principal.of(tenant or config.tenant, role or config.role),
            target_version or config.target_version,
            as_of or config.as_of,
            required_fact_ids=facts or None,
        )
    if as_json:
        _print_json(answer_dict(answer, explain=explain, audience=audience))
        return
    click.echo(answer_text(answer))
    if explain:
        click.echo("\ntrace:")
        click.echo(json.dumps(answer.trace.to_dict(audience=audience), ensure_ascii=False, indent=2))
    del KnowledgeBase


def _knowledge_base(embedder: str | None) -> Any:
    from ..index.embedders import DEFAULT_EMBEDDER, make_embedder
    from ..pipeline.engine import KnowledgeBase

    return KnowledgeBase.demo(make_embedder(embedder or DEFAULT_EMBEDDER))


def _open_kb(kb_dir: Path, embedder: str | None) -> Any:
    from ..index.embedders import make_embedder
    from ..kb.directory import open_kb

    return open_kb(kb_dir, make_embedder(embedder) if embedder else None)


@main.command("eval")
@click.option("--cases", "cases_path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--embedder", type=click.Choice(["use", "e5", "fake"]), default=None, help="Dense model.")
def eval_command(cases_path: Path | None, out_dir: Path, embedder: str | None) -> None:
    """Run the demo's 20 cases (or a JSONL file of cases) and write the reports.

    Writes rag-evidence.json, rag-evidence.md and rag-trace.jsonl into OUT;
    the same inputs give byte-identical files. Exit status 1 if a conformance
    case fails.
    """
    from ..evaluate.runner import run_evaluation

    with library_errors():
        report = run_evaluation(_knowledge_base(embedder), cases_path=cases_path, out_dir=out_dir)
    summary = report["summary"]
    click.echo(
        f"{summary['cases']} cases · conformance passed {summary['conformance_passed']}"
        f"/{summary['conformance_cases']} · failure probes {summary['failure_probes']}"
        f" · false answers {summary['false_answer']} · policy violations "
        f"{report['governance']['policy_violation']}"
    )
    for name in ("rag-evidence.json", "rag-evidence.md", "rag-trace.jsonl"):
        click.echo(f"wrote {out_dir / name}")
    if summary["failed_case_ids"]:
        click.echo("failed: " + ", ".join(summary["failed_case_ids"]), err=True)
        sys.exit(1)


# ----- bench: retrieval benchmarks on BEIR folders -----


@main.group()
def bench() -> None:
    """Benchmarks: retrieval on public datasets (BEIR format), the injection defence."""


@bench.command("retrieval")
@click.argument("dataset_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--split", default="test", show_default=True, help="qrels split to evaluate.")
@click.option(
    "--channels",
    default="bm25,dense,hybrid,hybrid+rerank",
    show_default=True,
    help="Comma-separated: bm25, dense, hybrid, hybrid+rerank.",
)
@click.option("--embedder", type=click.Choice(["use", "e5", "fake"]), default="use", show_default=True)
@click.option(
    "--analyzer",
    type=click.Choice(["auto", "default", "english"]),
    default="auto",
    show_default=True,
    help="BM25 tokens: zh/en tokenizer, or Lucene-like English (Porter); auto picks by script.",
)
@click.option("--max-queries", type=click.IntRange(min=1), help="Evaluate only the first N queries (by id).")
@click.option(
    "--tune-on",
    help="DIR[:SPLIT] to choose BM25 k1/b and rerank weights on, or 'none'. "
    "Default: the folder's train split when it has one.",
)
@click.option(
    "--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), help="Write the JSON here."
)
@click.option(
    "--cache",
    "cache_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Embedding cache folder [default: ~/.cache/veracity/bench].",
)
@click.option("--progress/--no-progress", default=True, show_default=True, help="Embedding progress bar.")
def bench_retrieval(
    dataset_dir: Path,
    split: str,
    channels: str,
    embedder: str,
    analyzer: str,
    max_queries: int | None,
    tune_on: str | None,
    out_path: Path | None,
    cache_dir: Path | None,
    progress: bool,
) -> None:
    """Benchmark bm25 / dense / hybrid / hybrid+rerank on a BEIR folder.

    Prints nDCG@10, Recall@5/10/100 and MRR@10 per channel with build time and
    query latency p50/p95, and writes the same as canonical JSON with --out.
    """
    from ..bench.report import canonical_json, markdown_table, summary_lines
    from ..bench.retrieval import BenchSettings
    from ..bench.run import benchmark_folder

    with library_errors():
        settings = BenchSettings(
            channels=tuple(c.strip() for c in channels.split(",") if c.strip()),
            embedder=embedder,
            analyzer=analyzer,
            max_queries=max_queries,
            cache_dir=cache_dir or Path.home() / ".cache" / "veracity" / "bench",
            progress=progress,
        )
        report = benchmark_folder(dataset_dir, split, settings, tune_on=tune_on)
    for line in summary_lines(report):
        click.echo(line)
    click.echo(markdown_table([report]), nl=False)
    if out_path is not None:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(canonical_json(report), encoding="utf-8")
        click.echo(f"wrote {out_path}")


@bench.command("injection")
@click.option(
    "--split",
    type=click.Choice(["test", "tune"]),
    default="test",
    show_default=True,
    help="Half of the benchmark: test (never used to fit the detector) or tune (fitted on it).",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the generated corpus.")
@click.option(
    "--embedder",
    type=click.Choice(["use", "e5", "fake"]),
    default="use",
    show_default=True,
    help="Dense model of the end-to-end check.",
)
@click.option("--end-to-end/--detection-only", default=True, show_default=True, help="Also ask the demo.")
@click.option(
    "--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), help="Write the JSON here."
)
def bench_injection(split: str, seed: int, embedder: str, end_to_end: bool, out_path: Path | None) -> None:
    """Injection benchmark: detection recall, false quarantine, attack text in answers, answers changed.

    Generates attack and benign documents from the benchmark's templates (seeded),
    measures the detector on one half, and, end to end, asks the Starship demo each
    target question with and without the half's attack documents.
    """
    from ..bench.injection.measure import run_benchmark, summary_lines
    from ..bench.report import canonical_json
    from ..index.embedders import make_embedder

    with library_errors():
        report = run_benchmark(
            split, seed=seed, embedder=make_embedder(embedder) if end_to_end else None,
            end_to_end_check=end_to_end,
        )  # fmt: skip
    for line in summary_lines(report):
        click.echo(line)
    if out_path is not None:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(canonical_json(report), encoding="utf-8")
        click.echo(f"wrote {out_path}")


def _register_kb_commands() -> None:
    from .index import INDEX_COMMANDS
    from .kb import ingest_command, init_demo_command
    from .lifecycle import LIFECYCLE_COMMANDS

    main.add_command(ingest_command)
    main.add_command(init_demo_command)
    for command in (*LIFECYCLE_COMMANDS, *INDEX_COMMANDS):
        main.add_command(command)


_register_kb_commands()

if __name__ == "__main__":  # pragma: no cover
    main()
