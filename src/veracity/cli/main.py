"""The ``veracity`` command: a thin click layer over the library.

Each command parses its options, makes one library call and maps library
errors to a clean message and exit status 1 (usage errors exit 2).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .common import KnowledgeBaseLocation, composer_of, embedder_option, library_errors, llm_options


@click.group()
@click.version_option(package_name="veracity")
def main() -> None:
    """veracity: warranted answers from governed documents.

    Every answer cites the exact chunk behind each claim, or says what is
    missing (partial), or abstains. Runs offline on the bundled Starship
    Workbench demo: try `veracity ask` and `veracity eval --out out`.
    """


@main.command("eval")
@click.option("--cases", "cases_path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path))
@embedder_option()
@click.option(
    "--kb",
    "kb_location",
    type=KnowledgeBaseLocation(),
    help="Evaluate this knowledge base (written by 'veracity init-demo --kb') instead of the in-memory demo.",
)
@llm_options
def eval_command(
    cases_path: Path | None, out_dir: Path, embedder: str | None, kb_location: str | Path | None, **llm: Any
) -> None:
    """Run the demo's 20 cases (or a JSONL file of cases) and write the reports.

    Writes rag-evidence.json, rag-evidence.md and rag-trace.jsonl into OUT;
    the same inputs give byte-identical files. Exit status 1 if a conformance
    case fails. With --kb the cases run against that knowledge base (a
    directory or a postgresql:// URL holding the demo), so every backend can
    be checked against the same reports. With --composer llm the reports add
    the written claims' faithfulness, citation precision and recall and the
    dropped claims' reasons.
    """
    import time

    from ..evaluate.runner import run_evaluation
    from ..model.errors import NotFoundError

    with library_errors():
        if kb_location is not None:
            from ..index.embedders import make_embedder
            from ..kb.directory import open_kb

            kb = open_kb(kb_location, make_embedder(embedder) if embedder else None)
        else:
            kb = _knowledge_base(embedder)
        kb.composer = composer_of(llm)
        started = time.perf_counter()
        try:
            report = run_evaluation(kb, cases_path=cases_path, out_dir=out_dir)
        except NotFoundError as exc:
            if kb_location is None or cases_path is not None:
                raise
            raise NotFoundError(
                f"{exc}: the demo's cases name the demo's documents, and {kb_location} is not the demo; "
                "give --cases FILE with cases of your own, or make a demo knowledge base with "
                "'veracity init-demo --kb DIR'"
            ) from None
        seconds = time.perf_counter() - started
    summary = report["summary"]
    click.echo(
        f"{summary['cases']} cases · conformance passed {summary['conformance_passed']}"
        f"/{summary['conformance_cases']} · failure probes {summary['failure_probes']}"
        f" · false answers {summary['false_answer']} · policy violations "
        f"{report['governance']['policy_violation']}"
    )
    written = report["metrics"].get("composition")
    if written:
        click.echo(
            f"llm composer: {written['claims_verified']}/{written['claims_written']} claims verified "
            f"(faithfulness {_rate(written['faithfulness'])}), citation precision "
            f"{_rate(written['citation_precision'])}, recall {_rate(written['citation_recall'])}; "
            f"outcomes {written['outcomes']}; dropped {written['dropped'] or 'none'}"
        )
        click.echo(f"{seconds:.1f} s for {summary['cases']} cases (latency is not in the reports)")
    for name in ("rag-evidence.json", "rag-evidence.md", "rag-trace.jsonl"):
        click.echo(f"wrote {out_dir / name}")
    if summary["failed_case_ids"]:
        click.echo("failed: " + ", ".join(summary["failed_case_ids"]), err=True)
        sys.exit(1)


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _knowledge_base(embedder: str | None) -> Any:
    from ..index.embedders import DEFAULT_EMBEDDER, make_embedder
    from ..pipeline.engine import Engine

    return Engine.demo(make_embedder(embedder or DEFAULT_EMBEDDER))


def _register_kb_commands() -> None:
    from .ask import ask_command
    from .bench import bench
    from .docs import chunk_command, docs
    from .feedback import feedback_group
    from .guard import guard_group
    from .index import INDEX_COMMANDS
    from .kb import composer_command, ingest_command, init_demo_command, kb_group
    from .lifecycle import LIFECYCLE_COMMANDS
    from .mcp import mcp_command
    from .pg import pg
    from .plugins import plugins_command
    from .search import search_command
    from .serve import keys, serve_command
    from .settings import settings_command
    from .sync import sync_command

    main.add_command(ask_command)
    main.add_command(search_command)
    main.add_command(docs)
    main.add_command(chunk_command)
    main.add_command(ingest_command)
    main.add_command(init_demo_command)
    main.add_command(kb_group)
    main.add_command(composer_command)
    main.add_command(bench)
    main.add_command(mcp_command)
    main.add_command(serve_command)
    main.add_command(keys)
    main.add_command(pg)
    main.add_command(guard_group)
    main.add_command(sync_command)
    main.add_command(feedback_group)
    main.add_command(settings_command)
    main.add_command(plugins_command)
    for command in (*LIFECYCLE_COMMANDS, *INDEX_COMMANDS):
        main.add_command(command)


_register_kb_commands()

if __name__ == "__main__":  # pragma: no cover
    main()
