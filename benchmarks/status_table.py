"""The README's status table, generated from the committed benchmark reports.

    python benchmarks/status_table.py              # print the table (Markdown)
    python benchmarks/status_table.py --write      # replace it in README.md between the markers
    python benchmarks/status_table.py --check      # exit 1 when README.md's table differs
    python benchmarks/status_table.py --list       # every report a row reads: file, command, present?
    python benchmarks/status_table.py --import answers-squad2-report.json /tmp/squad.json [--wall-s 812]

Every row reads small JSON reports in ``benchmarks/reports/`` (committed;
``benchmarks/results/`` is the scripts' scratch and is not). A row names the
data and the split it was measured on, shows each metric with its target,
and computes "where it falls short" from the numbers: a metric whose report
is missing shows "not measured yet", never a number. ``--import`` copies a
fresh benchmark output into ``benchmarks/reports/``: it drops the per-item
lists (kept reports stay small), and records the command that made it, the
commit, the date and, when given, the wall time under ``_provenance``.
"""

from __future__ import annotations

import argparse
import json
import operator
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
REPORTS = ROOT / "benchmarks" / "reports"
BEGIN = "<!-- status:begin -->"
END = "<!-- status:end -->"
NOT_MEASURED = "not measured yet"
DATASETS = "../shared/datasets"

Key = str | Mapping[str, str]  # a dict key, or the fields that pick one item of a list


# ----- the reports: file name, the command that writes it, what --import drops -----


def _drop(*keys: str) -> Callable[[Any], Any]:
    """A slimmer that removes per-item lists (top level, or one level down)."""

    def slim(data: Any) -> Any:
        if isinstance(data, dict):
            return {
                k: _drop(*keys)(v) if isinstance(v, dict) else v for k, v in data.items() if k not in keys
            }
        return data

    return slim


def _outcomes(data: Any) -> Any:
    """bench_docs_questions.py writes a list of rows: keep id, status and outcome of each."""
    rows = data["rows"] if isinstance(data, dict) else data
    return {"rows": [{k: row[k] for k in ("id", "status", "outcome")} for row in rows]}


@dataclass(frozen=True)
class Report:
    """One committed report: the command that writes it, and how --import slims it."""

    command: str
    slim: Callable[[Any], Any] = field(default=lambda data: data)


_ANSWERS = f"veracity bench answers {DATASETS}/{{set}} {{opts}}--sample 500 --seed 0 --out /tmp/{{name}}"
_INJECTION = "veracity bench injection --split {split} {opts}--out /tmp/{name}"
_RETRIEVAL = "veracity bench retrieval {folder} --split {split} {opts}--no-progress --out /tmp/{name}"
_DOCS = (
    "python benchmarks/bench_docs_questions.py {docs} benchmarks/docs_questions/{set}.yaml "
    "--kb /tmp/kb-{set} --split heldout --out /tmp/{name}"
)


def _reports() -> dict[str, Report]:
    injection = _drop("missed", "false_alarms", "rows")
    reports = {
        "eval-starship.json": Report(
            "veracity eval --out /tmp/eval && cp /tmp/eval/rag-evidence.json /tmp/eval-starship.json"
        ),
        "retrieval-scifact-test.json": Report(
            _RETRIEVAL.format(
                folder=f"{DATASETS}/scifact", split="test", opts="", name="retrieval-scifact-test.json"
            )
        ),
        "retrieval-cmrc2018-dev.json": Report(
            _RETRIEVAL.format(
                folder=f"{DATASETS}/cmrc2018/beir/dev",
                split="dev",
                opts=f"--tune-on {DATASETS}/cmrc2018/beir/trial:trial ",
                name="retrieval-cmrc2018-dev.json",
            )
        ),
        "retrieval-dureader-doc.json": Report(
            _RETRIEVAL.format(
                folder=f"{DATASETS}/dureader_demo/beir/doc",
                split="test",
                opts=f"--embedder e5 --tune-on {DATASETS}/cmrc2018/beir/trial:trial ",
                name="retrieval-dureader-doc.json",
            )
        ),
        "answers-squad2-report.json": Report(
            _ANSWERS.format(set="squad2_dev_half", opts="--part report ", name="answers-squad2-report.json"),
            _drop("items"),
        ),
        "answers-cmrc2018-dev.json": Report(
            _ANSWERS.format(set="cmrc2018", opts="--split dev ", name="answers-cmrc2018-dev.json"),
            _drop("items"),
        ),
        "answers-drcd-dev.json": Report(
            _ANSWERS.format(set="drcd", opts="--split dev ", name="answers-drcd-dev.json"), _drop("items")
        ),
        "docs-questions-httpx-heldout.json": Report(
            _DOCS.format(docs="httpx/docs", set="httpx-en", name="docs-questions-httpx-heldout.json"),
            _outcomes,
        ),
        "docs-questions-vite-heldout.json": Report(
            _DOCS.format(docs="vite-zh", set="vite-zh", name="docs-questions-vite-heldout.json"), _outcomes
        ),
        "speed-hybrid-100k.json": Report(
            "python benchmarks/bench_hybrid_100k.py --chunks 100000 --queries 200 --asks 60 --no-embedding "
            "--no-peer --workdir W100K --out /tmp/speed-hybrid-100k.json"
        ),
        "speed-hybrid-1m.json": Report(
            "python benchmarks/bench_hybrid_100k.py --chunks 1000000 --queries 200 --asks 20 --no-embedding "
            "--no-lexical-ingest --no-model-free-ingest --workdir W1M --out /tmp/speed-hybrid-1m.json"
        ),
        "load-service.json": Report(
            "python benchmarks/load_service.py --traffic mixed --clients 20 --seconds 30 --workers 1 "
            "--out /tmp/load-service.json",
            _drop("per_question"),
        ),
        "load-engine.json": Report(
            "python benchmarks/load_service.py --clients 1,4,20 --workers 1,2,4 --per-cell 200 "
            "--out /tmp/load-engine.json"
        ),
        "ocr.json": Report("python benchmarks/bench_ocr.py --out /tmp/ocr.json", _drop("cer_per_page")),
    }
    for split in ("test", "blind", "unread"):
        for policy, opts in (("", ""), ("-related", "--non-official related ")):
            name = f"injection-{split}{policy}.json"
            reports[name] = Report(_INJECTION.format(split=split, opts=opts, name=name), injection)
    return reports


REPORT_FILES = _reports()


# ----- metrics and rows -----


@dataclass(frozen=True)
class Metric:
    """One number of a row: where it is in which report, its target, how it is shown.

    ``path`` walks the JSON: a string is a key; a mapping picks the item of a list whose
    fields equal it. ``count`` (instead of a path) counts ``rows`` whose ``field`` is one of
    the values. With ``of`` (a path or a count) the metric is a share, shown as ``n/d``, or
    with ``difference`` the first number less the second.
    """

    label: str
    report: str
    path: tuple[Key, ...] = ()
    count: tuple[str, tuple[str, ...]] | None = None
    of: tuple[Key, ...] | tuple[str, tuple[str, ...]] | None = None
    difference: bool = False
    target: tuple[str, float] | None = None
    places: int = 3
    unit: str = ""


OPS: dict[str, Callable[[float, float], bool]] = {">=": operator.ge, "<=": operator.le, "==": operator.eq}
SIGN = {">=": "≥", "<=": "≤", "==": "="}


@dataclass(frozen=True)
class Row:
    """A row of the status table; ``note`` is said only when a target is missed."""

    what: str
    data: str
    metrics: tuple[Metric, ...]
    note: str = ""


ANSWERABLE = ("correct", "wrong sentence", "wrong file", "false abstain")


def _ask_metrics(report: str, budget_ms: int) -> tuple[Metric, Metric]:
    """An ask's end-to-end p50 without the sentence reader (``budget_ms``), and the reader's own
    p50 against its 150 ms budget (#33), from a ``bench_hybrid_100k.py`` report."""
    return (
        Metric(
            "ask end to end p50, the sentence reader apart",
            report,
            ("ask", "without_reader", "p50_ms"),
            target=("<=", budget_ms),
            places=0,
            unit=" ms",
        ),
        Metric(
            "sentence reader p50",
            report,
            ("ask", "stages", "sentence_reader", "p50_ms"),
            target=("<=", 150),
            places=0,
            unit=" ms",
        ),
    )


def _injection_row(split: str, what: str, data: str, note: str) -> Row:
    report = f"injection-{split}.json"
    return Row(
        what,
        data,
        (
            Metric("attacks caught", report, ("detected",), of=("attack_documents",), target=(">=", 0.95)),
            Metric(
                "benign pages quarantined",
                report,
                ("falsely_quarantined",),
                of=("benign_documents",),
                target=("<=", 0.02),
            ),
            Metric(
                "attack text in answers",
                report,
                ("end_to_end", "attack_text_in_answers"),
                target=("==", 0),
                places=0,
            ),
        ),
        note,
    )


_READER_NOTE = (
    "which sentence answers is chosen by hand-built features with a small sentence reader trained here "
    "(4 layers); deeper readers and other data measured so far did not pass their tuning-side rules "
    "(docs/reader.md)"
)

ROWS: tuple[Row, ...] = (
    Row(
        "Governed answers with citations: answer, partial or abstain",
        "Starship demo: 18 documents, 20 conformance cases written with the code (a regression check, "
        "not a held-out test); `veracity eval`",
        (
            Metric(
                "cases passed",
                "eval-starship.json",
                ("summary", "conformance_passed"),
                of=("summary", "conformance_cases"),
                target=(">=", 1.0),
            ),
            Metric(
                "false answers", "eval-starship.json", ("summary", "false_answer"), target=("==", 0), places=0
            ),
            Metric(
                "policy violations",
                "eval-starship.json",
                ("governance", "policy_violation"),
                target=("==", 0),
                places=0,
            ),
        ),
    ),
    Row(
        "Retrieval, English: BM25 ‖ dense → RRF → rerank",
        "SciFact test: 5,183 abstracts, 300 queries; BM25 and rerank weights chosen on SciFact train "
        "only; `use` embedder",
        (
            Metric(
                "nDCG@10 hybrid+rerank",
                "retrieval-scifact-test.json",
                ("channels", "hybrid+rerank", "metrics", "ndcg@10"),
                target=(">=", 0.72),
            ),
            Metric(
                "nDCG@10 hybrid",
                "retrieval-scifact-test.json",
                ("channels", "hybrid", "metrics", "ndcg@10"),
                target=(">=", 0.70),
            ),
            Metric("nDCG@10 bm25", "retrieval-scifact-test.json", ("channels", "bm25", "metrics", "ndcg@10")),
        ),
        "the `use` embedder is weak on scientific English (equal-weight RRF loses to BM25 alone)",
    ),
    Row(
        "Retrieval, Chinese",
        "CMRC 2018 dev: 848 passages, 3,219 questions; tuned on CMRC trial (another corpus); `use`",
        (
            Metric(
                "Recall@5 hybrid+rerank",
                "retrieval-cmrc2018-dev.json",
                ("channels", "hybrid+rerank", "metrics", "recall@5"),
                target=(">=", 0.97),
            ),
        ),
    ),
    Row(
        "Retrieval, Chinese with human labels",
        "DuReader demo, `doc` view: 916 documents, 196 queries; tuned on CMRC trial; `e5` embedder",
        (
            Metric(
                "nDCG@10 hybrid",
                "retrieval-dureader-doc.json",
                ("channels", "hybrid", "metrics", "ndcg@10"),
            ),
            Metric(
                "hybrid − bm25",
                "retrieval-dureader-doc.json",
                ("channels", "hybrid", "metrics", "ndcg@10"),
                of=("channels", "bm25", "metrics", "ndcg@10"),
                difference=True,
                target=(">=", 0.05),
            ),
        ),
    ),
    Row(
        "Answers or abstains on English reading questions",
        "SQuAD 2.0 half-dev, report part (articles 9–16), never tuned on; 500 questions, seed 0; `use`",
        (
            Metric(
                "correct outcome",
                "answers-squad2-report.json",
                ("summary", "correct_outcome"),
                target=(">=", 0.70),
            ),
            Metric(
                "gold answer contained",
                "answers-squad2-report.json",
                ("summary", "answer_contained"),
                target=(">=", 0.75),
            ),
            Metric(
                "false answers on unanswerable",
                "answers-squad2-report.json",
                ("summary", "false_answer"),
                target=("<=", 0.25),
            ),
        ),
        "unanswerable questions written against the paragraph: the sentence reader trained here "
        "(docs/reader.md) is one feature of the decision, which is calibrated on questions whose "
        "paragraph is missing, not on these",
    ),
    Row(
        "Answers on Chinese reading questions",
        "CMRC 2018 dev, never tuned on (the models are fitted on CMRC trial); 500 questions, seed 0; `use`",
        (
            Metric(
                "gold answer contained",
                "answers-cmrc2018-dev.json",
                ("summary", "answer_contained"),
                target=(">=", 0.90),
            ),
            Metric(
                "false abstain",
                "answers-cmrc2018-dev.json",
                ("summary", "false_abstain"),
                target=("<=", 0.05),
            ),
        ),
        _READER_NOTE,
    ),
    Row(
        "Answers on traditional Chinese",
        "DRCD dev, never tuned on; 500 questions, seed 0; `use`",
        (
            Metric(
                "gold answer contained",
                "answers-drcd-dev.json",
                ("summary", "answer_contained"),
                target=(">=", 0.90),
            ),
        ),
        _READER_NOTE,
    ),
    Row(
        "Answers on documentation nobody here wrote, to questions users type",
        "HTTPX docs (en) and Vite docs (zh), held-out questions only (`heldout` split); default settings",
        (
            Metric(
                "HTTPX correct",
                "docs-questions-httpx-heldout.json",
                count=("outcome", ("correct",)),
                of=("outcome", ANSWERABLE),
                target=(">=", 0.75),
            ),
            Metric(
                "HTTPX unanswerable abstained",
                "docs-questions-httpx-heldout.json",
                count=("outcome", ("abstained",)),
                of=("outcome", ("abstained", "false answer")),
                target=(">=", 0.75),
            ),
            Metric(
                "Vite correct",
                "docs-questions-vite-heldout.json",
                count=("outcome", ("correct",)),
                of=("outcome", ANSWERABLE),
                target=(">=", 0.75),
            ),
            Metric(
                "Vite unanswerable abstained",
                "docs-questions-vite-heldout.json",
                count=("outcome", ("abstained",)),
                of=("outcome", ("abstained", "false answer")),
                target=(">=", 0.75),
            ),
        ),
        _READER_NOTE,
    ),
    _injection_row(
        "test",
        "Injection defence: pages that give the model orders are held back",
        "injection benchmark, test half: templates by the tune half's authors, never fitted; seed 0",
        "false alarms are mostly pages about one's own assistant; missed attacks reach answers as "
        "marked community claims (`non_official: related` stops that, below)",
    ),
    _injection_row(
        "blind",
        "… on attack pages other people wrote",
        "injection benchmark, blind part: author A's templates, read but never fitted; seed 0",
        "detection does not carry over to strangers' styles; it needs a trained multilingual classifier",
    ),
    _injection_row(
        "unread",
        "… on attack pages nobody here has read",
        "injection benchmark, unread part: author B's templates, never read nor fitted; seed 0",
        "detection does not carry over to strangers' styles; it needs a trained multilingual classifier",
    ),
    Row(
        "No attack text in answers when community pages are only cited as related",
        "the same three parts with the tenant's `non_official: related`",
        tuple(
            Metric(
                f"{split}: attack text in answers",
                f"injection-{split}-related.json",
                ("end_to_end", "attack_text_in_answers"),
                target=("==", 0),
                places=0,
            )
            for split in ("test", "blind", "unread")
        ),
    ),
    Row(
        "Filtered hybrid query at 100k chunks (SQLite)",
        "synthetic corpus of `benchmarks/synthetic_kb.py`, 3 tenants, 100k chunks, 200 queries; "
        "2 shared cores",
        (
            Metric(
                "p50", "speed-hybrid-100k.json", ("hybrid", "p50_ms"), target=("<=", 15), places=1, unit=" ms"
            ),
            Metric(
                "p95", "speed-hybrid-100k.json", ("hybrid", "p95_ms"), target=("<=", 25), places=1, unit=" ms"
            ),
            Metric(
                "ingest without vectors or model steps",
                "speed-hybrid-100k.json",
                ("ingest_without_model_steps", "chunks_per_s"),
                target=(">=", 5000),
                places=0,
                unit=" chunks/s",
            ),
            Metric(
                "with the cue-word detector judging at ingest",
                "speed-hybrid-100k.json",
                ("ingest", "chunks_per_s"),
                places=0,
                unit=" chunks/s",
            ),
            *_ask_metrics("speed-hybrid-100k.json", 100),
        ),
        "without model steps the writer and the parse workers fill both cores (about 50 CPU-seconds "
        "at 100k; 5,000 chunks/s needs about 40); with the cue-word detector, judging the non-official "
        "chunks is most of the parse workers' CPU",
    ),
    Row(
        "Filtered hybrid query and asks at 1M chunks (SQLite)",
        "the same synthetic corpus at 1M chunks (155,039 files), 200 queries, 20 asks; 2 shared cores",
        (
            Metric(
                "p50", "speed-hybrid-1m.json", ("hybrid", "p50_ms"), target=("<=", 100), places=1, unit=" ms"
            ),
            Metric("p95", "speed-hybrid-1m.json", ("hybrid", "p95_ms"), places=1, unit=" ms"),
            *_ask_metrics("speed-hybrid-1m.json", 200),
        ),
    ),
    Row(
        "Serving: keys, answer cache, a withdraw mid-run",
        "`load_service.py`: 20 clients × 30 s on loopback, one worker, real `use` embedder, the served "
        "demo with two tenants",
        (
            Metric("errors", "load-service.json", ("errors",), target=("==", 0), places=0),
            Metric(
                "answers citing the withdrawn page after the withdraw",
                "load-service.json",
                ("withdraw", "answers_after_citing_withdrawn"),
                target=("==", 0),
                places=0,
            ),
            Metric("p95", "load-service.json", ("p95_ms",), places=0, unit=" ms"),
        ),
    ),
    Row(
        "Serving uncached answers in parallel, and cache hits",
        "`load_service.py` engine traffic: 200 distinct CMRC 2018 dev questions per cell asked once "
        "(misses), then five times again (hits), 2 workers × 20 clients on loopback, real `use` "
        "embedder; the sequential rate is this process asking the cell's questions with no cache, "
        "right before the cell",
        (
            Metric(
                "uncached throughput ÷ sequential",
                "load-engine.json",
                ("summary", "miss_over_sequential"),
                target=(">=", 1.6),
                places=2,
                unit="×",
            ),
            Metric(
                "uncached p95 ÷ p50",
                "load-engine.json",
                ("summary", "miss_p95_over_p50"),
                target=("<=", 3),
                places=2,
            ),
            Metric(
                "cache hits",
                "load-engine.json",
                ("summary", "hit_per_s"),
                target=(">=", 500),
                places=0,
                unit=" requests/s",
            ),
            Metric("errors", "load-engine.json", ("summary", "errors"), target=("==", 0), places=0),
        ),
        "2 cores shared by the workers and the clients, and a noisy host: seven runs of this cell on "
        "2026-12-07 gave 1.48–1.95 × (median 1.66); the four that timed 1,000 hits, 480–929 hits a "
        "second (docs/serving.md)",
    ),
    Row(
        "OCR of scanned pages (default engine, rapidocr)",
        "`bench_ocr.py`: 4 A4 pages per language rendered at 300 dpi from known text",
        (
            Metric(
                "zh CER",
                "ocr.json",
                ("rows", {"engine": "rapidocr", "language": "zh"}, "cer"),
                target=("<=", 0.03),
                places=4,
            ),
            Metric(
                "en CER",
                "ocr.json",
                ("rows", {"engine": "rapidocr", "language": "en"}, "cer"),
                target=("<=", 0.02),
                places=4,
            ),
        ),
    ),
)


# ----- reading and rendering -----


class Missing(Exception):
    """A report file or a path inside it is absent."""


def _walk(data: Any, path: Sequence[Key]) -> Any:
    for key in path:
        if isinstance(key, Mapping):
            if not isinstance(data, list):
                raise Missing(str(key))
            found = [item for item in data if all(item.get(k) == v for k, v in key.items())]
            if not found:
                raise Missing(str(key))
            data = found[0]
        else:
            if not isinstance(data, dict) or key not in data:
                raise Missing(key)
            data = data[key]
    return data


def _count(data: Any, spec: tuple[str, tuple[str, ...]]) -> int:
    field_name, values = spec
    rows = data["rows"] if isinstance(data, dict) else data
    return sum(1 for row in rows if row.get(field_name) in values)


def _load(folder: Path, name: str, cache: dict[str, Any]) -> Any:
    if name not in cache:
        path = folder / name
        cache[name] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    if cache[name] is None:
        raise Missing(name)
    return cache[name]


@dataclass(frozen=True)
class Value:
    """A metric's number (``None``: not measured) and how it reads."""

    metric: Metric
    number: float | None
    text: str

    @property
    def met(self) -> bool | None:
        if self.number is None or self.metric.target is None:
            return None
        op, goal = self.metric.target
        return OPS[op](self.number, goal)


def _fmt(number: float, metric: Metric) -> str:
    return f"{number:,.{metric.places}f}{metric.unit}"


def evaluate(metric: Metric, folder: Path, cache: dict[str, Any]) -> Value:
    """The metric's value from its report, or ``None`` with "not measured yet"."""
    try:
        data = _load(folder, metric.report, cache)
        if metric.count is not None:
            top = float(_count(data, metric.count))
        else:
            top = _walk(data, metric.path)
        if top is None:
            raise Missing(metric.label)
        if metric.of is None:
            return Value(metric, float(top), _fmt(float(top), metric))
        if metric.count is not None:
            bottom = float(_count(data, metric.of))  # type: ignore[arg-type]
        else:
            bottom = _walk(data, metric.of)  # type: ignore[arg-type]
        if metric.difference:
            number = float(top) - float(bottom)
            places = metric.places
            return Value(metric, number, f"{number:+.{places}f} ({top:.{places}f} − {bottom:.{places}f})")
        if not bottom:
            return Value(metric, None, f"{int(top)}/0")
        number = float(top) / float(bottom)
        return Value(metric, number, f"{int(top)}/{int(bottom)} = {number:.{metric.places}f}")
    except Missing:
        return Value(metric, None, NOT_MEASURED)


def _target_text(metric: Metric) -> str:
    if metric.target is None:
        return ""
    op, goal = metric.target
    if metric.of is not None and not metric.difference and op == ">=" and goal == 1.0:
        return " (target: all)"
    if op == "==":
        return f" (target {goal:g})"
    places = 2 if metric.places > 0 and not float(goal).is_integer() else 0
    return f" (target {SIGN[op]} {goal:,.{places}f}{metric.unit})"


def _shortfall(value: Value) -> str:
    op, goal = value.metric.target  # type: ignore[misc]
    assert value.number is not None
    if op == "==":
        return f"{value.metric.label} {value.number:g}, not {goal:g}"
    gap = f"{abs(value.number - goal):,.{value.metric.places}f}{value.metric.unit}"
    return f"{value.metric.label} {gap} {'below' if op == '>=' else 'above'} target"


def render_row(row: Row, folder: Path, cache: dict[str, Any]) -> str:
    """One Markdown table row."""
    values = [evaluate(m, folder, cache) for m in row.metrics]
    reports = sorted({m.report for m in row.metrics})
    links = ", ".join(
        f"[{name}](benchmarks/reports/{name})" if (folder / name).is_file() else f"`{name}`"
        for name in reports
    )
    result = "; ".join(f"{v.metric.label} {v.text}{_target_text(v.metric)}" for v in values)
    measured = [v for v in values if v.number is not None]
    if not measured:
        result, short = NOT_MEASURED, NOT_MEASURED
    else:
        missed = [v for v in values if v.met is False]
        targeted = [v for v in values if v.met is not None]
        unmeasured = [v for v in values if v.number is None and v.metric.target is not None]
        parts = [_shortfall(v) for v in missed]
        if missed and row.note:
            parts.append(row.note)
        if unmeasured:
            parts.append("not measured yet: " + ", ".join(v.metric.label for v in unmeasured))
        if parts:
            short = "; ".join(parts)
        elif targeted:
            short = "meets its targets"
        else:
            short = "no target set"
    cells = [row.what, f"{row.data} ({links})", result, short]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def table(folder: Path = REPORTS) -> str:
    """The whole generated block between the markers (markers excluded)."""
    cache: dict[str, Any] = {}
    lines = [
        "| what works | measured on (data, split; report) | result (target) | where it falls short |",
        "|---|---|---|---|",
        *(render_row(row, folder, cache) for row in ROWS),
    ]
    return "\n".join(lines) + "\n"


def replace_block(text: str, block: str) -> str:
    """``text`` with the part between the markers replaced by ``block``."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"README.md has no {BEGIN} … {END} block")
    return text[: start + len(BEGIN)] + "\n" + block + text[end:]


# ----- importing a fresh report -----


def _commit() -> str | None:
    try:
        found = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return found.stdout.strip() or None


def import_report(name: str, source: Path, folder: Path, wall_s: float | None, command: str | None) -> Path:
    """Slim ``source`` as ``name``'s spec says, record how it was made, write it to ``folder``."""
    if name not in REPORT_FILES:
        raise SystemExit(f"unknown report {name!r}; known: {', '.join(sorted(REPORT_FILES))}")
    spec = REPORT_FILES[name]
    data = spec.slim(json.loads(source.read_text(encoding="utf-8")))
    if not isinstance(data, dict):
        data = {"rows": data}
    data["_provenance"] = {
        "command": command or spec.command,
        "commit": _commit(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        **({"wall_s": wall_s} if wall_s is not None else {}),
    }
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    target.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    return target


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="replace the table in the README")
    action.add_argument("--check", action="store_true", help="exit 1 when the README's table differs")
    action.add_argument("--list", action="store_true", help="the reports the rows read, and their commands")
    action.add_argument("--import", dest="imported", nargs=2, metavar=("NAME", "SOURCE"), help="add a report")
    parser.add_argument("--reports", type=Path, default=REPORTS, help="folder of the reports")
    parser.add_argument("--readme", type=Path, default=README, help="the README to write or check")
    parser.add_argument("--wall-s", type=float, help="with --import: the run's wall time in seconds")
    parser.add_argument("--command", help="with --import: the command, when not the documented one")
    args = parser.parse_args(argv)
    if args.imported:
        name, source = args.imported
        print(f"wrote {import_report(name, Path(source), args.reports, args.wall_s, args.command)}")
        return 0
    if args.list:
        for name, spec in REPORT_FILES.items():
            state = "present" if (args.reports / name).is_file() else "MISSING"
            print(f"{name}  [{state}]\n    {spec.command}")
        return 0
    block = table(args.reports)
    if not (args.write or args.check):
        print(block, end="")
        return 0
    text = args.readme.read_text(encoding="utf-8")
    wanted = replace_block(text, block)
    if args.check:
        if wanted != text:
            print(f"{args.readme}: the status table differs; run python benchmarks/status_table.py --write")
            return 1
        return 0
    args.readme.write_text(wanted, encoding="utf-8")
    print(f"wrote the status table into {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
