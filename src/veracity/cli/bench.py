"""``veracity bench``: retrieval and answer benchmarks on public datasets, and the injection benchmark.

Thin: parse, call :mod:`veracity.bench`, print the tables, write the JSON.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .common import (
    composer_of,
    embedder_option,
    guard_runtime_option,
    library_errors,
    llm_options,
    progress_bar,
)

# ----- bench: retrieval benchmarks on BEIR folders -----


@click.group()
def bench() -> None:
    """Benchmarks: retrieval (BEIR folders), answers (QA folders), the injection defence."""


@bench.command("retrieval")
@click.argument("dataset_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--split", default="test", show_default=True, help="qrels split to evaluate.")
@click.option(
    "--channels",
    default="bm25,dense,hybrid,hybrid+rerank",
    show_default=True,
    help="Comma-separated: bm25, dense, hybrid, hybrid+rerank, hybrid+rerank+reader (the "
    "sentence reader rereads the first 8; not by default: about 80 pairs a query).",
)
@embedder_option(None, default="use")
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


@bench.command("answers")
@click.argument("dataset_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--split", help="Split folder under beir/ (default: dev, else the only one).")
@click.option(
    "--part",
    default="all",
    show_default=True,
    help="Which questions: all, a named part of the set (squad2_dev_half: tune, report) or articles:A:B.",
)
@click.option("--sample", type=click.IntRange(min=1), default=500, show_default=True, help="Questions drawn.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the question sample.")
@embedder_option(None, default="use")
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where knowledge bases are built and kept for reuse [default: ~/.cache/veracity/bench-answers].",
)
@click.option(
    "--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), help="Write the JSON report here."
)
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show a progress bar.")
@click.option(
    "--reader",
    "reader_name",
    default="none",
    show_default=True,
    help="The reading model that decides answers: 'shipped' (the package's reader), 'none' (the "
    "logistic answer models), or the path of a reader's .npz (its .json model card beside it).",
)
@click.option(
    "--reader-role",
    type=click.Choice(["decide", "choose"]),
    default="decide",
    show_default=True,
    help="decide: the reader chooses the claim and decides answer or abstain; choose: it only "
    "chooses the claim, the logistic answer models decide.",
)
@llm_options
def bench_answers(
    dataset_dir: Path,
    split: str | None,
    part: str,
    sample: int,
    seed: int,
    embedder: str,
    workdir: Path | None,
    out_path: Path | None,
    progress: bool,
    reader_name: str,
    reader_role: str,
    **llm: Any,
) -> None:
    """Ask a QA set's questions as a public user and score the answers.

    DATASET_DIR is a SQuAD- or CMRC-style folder (corpus.jsonl, queries.jsonl,
    qrels/, answers.jsonl; see shared/datasets/README.md). Prints status for
    answerable and unanswerable questions, gold-answer containment, citation
    accuracy, false-abstain and false-answer rates, the correct-outcome rate,
    the top-1-sentence baseline of the same run and latency; with --composer llm
    also the written claims' faithfulness, citation precision and recall and
    the dropped claims' reasons.
    """
    from ..bench.answers import benchmark_answers, summary_table
    from ..bench.report import canonical_json
    from ..index.embedders import make_embedder
    from ..reader.model import named_reader

    with library_errors(), progress_bar(progress) as update:
        report = benchmark_answers(
            dataset_dir,
            split=split,
            part=part,
            sample=sample,
            seed=seed,
            embedder=make_embedder(embedder),
            composer=composer_of(llm),
            reader=named_reader(reader_name, reader_role),
            workdir=workdir or Path.home() / ".cache" / "veracity" / "bench-answers",
            progress=(lambda done, total: update("questions", done, total)) if update else None,
        )
    click.echo(summary_table(report), nl=False)
    if out_path is not None:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(canonical_json(report), encoding="utf-8")
        click.echo(f"wrote {out_path}")


@bench.command("injection")
@click.option(
    "--split",
    type=click.Choice(["test", "tune", "blind", "unread"]),
    default="test",
    show_default=True,
    help="Part of the benchmark: test (never used to fit the detector), tune (fitted on it), "
    "blind (another author's templates, read but never fitted) or unread (a third author's, "
    "never read by whoever tunes the detector: look at the counts only).",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the generated corpus.")
@embedder_option("Dense model of the end-to-end check.", default="use")
@click.option("--end-to-end/--detection-only", default=True, show_default=True, help="Also ask the demo.")
@click.option(
    "--non-official",
    type=click.Choice(["marked", "related"]),
    default="marked",
    show_default=True,
    help="The demo tenant's policy for community sources (marked answers, or related only).",
)
@click.option(
    "--guard",
    "guard_name",
    default="none",
    show_default=True,
    help="What detects orders: 'none' (the cue-word detector), 'shipped' (the package's trained "
    "guard) or the path of a guard's .npz (its .json model card beside it).",
)
@guard_runtime_option("--guard-runtime")
@click.option(
    "--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), help="Write the JSON here."
)
def bench_injection(
    split: str,
    seed: int,
    embedder: str,
    end_to_end: bool,
    non_official: str,
    guard_name: str,
    guard_runtime: str | None,
    out_path: Path | None,
) -> None:
    """Injection benchmark: detection recall, false quarantine, attack text in answers, answers changed.

    Generates attack and benign documents from the benchmark's templates (seeded),
    measures the detector on one half, and, end to end, asks the Starship demo each
    target question with and without the half's attack documents.
    """
    from ..bench.injection.measure import run_benchmark, summary_lines
    from ..bench.report import canonical_json
    from ..guard.model import named_guard
    from ..index.embedders import make_embedder
    from ..pipeline.injection import use_guard

    with library_errors():
        guard = named_guard(guard_name, guard_runtime)
        use_guard(guard)
        try:
            report = run_benchmark(
                split,
                seed=seed,
                embedder=make_embedder(embedder) if end_to_end else None,
                end_to_end_check=end_to_end,
                non_official=non_official,
            )
        finally:
            use_guard(None)
        report["guard"] = guard_name if guard_name in ("none", "shipped") else Path(guard_name).stem
        if guard is not None:
            report["guard_runtime"] = guard.runtime
    for line in summary_lines(report):
        click.echo(line)
    if out_path is not None:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(canonical_json(report), encoding="utf-8")
        click.echo(f"wrote {out_path}")
