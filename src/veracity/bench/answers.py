"""The answer benchmark: ask every sampled question of a QA set, score what was said.

The paragraphs of the split become documents of one tenant (public, official,
always valid) in a fresh knowledge base; each sampled question is asked as a
public user. Scored per question and in aggregate:

- status for answerable and unanswerable questions;
- containment: a claim contains a gold answer (both normalized: NFKC,
  lowercase, punctuation, English articles and whitespace removed);
- citation accuracy: a cited chunk comes from the question's own paragraph;
- false abstain (answerable, abstained) and false answer (unanswerable, answered
  or partial);
- the correct-outcome rate: answerable answered with a gold answer contained,
  plus unanswerable abstained, over all questions;
- the top-1-sentence baseline on the same retrieval: always quote the sentence
  of the top evidence chunk sharing the most question tokens;
- latency of ``ask`` (p50, p95);
- with a composer other than the extractive one (``--composer llm``): the written claims'
  faithfulness, citation precision and recall, the verification outcomes and the dropped
  claims' reasons (:func:`veracity.evaluate.scoring.composition_summary`).
"""

from __future__ import annotations

import re
import statistics
import time
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..catalog.catalog import Catalog
from ..evaluate.scoring import composition_scores, composition_summary
from ..index.dense import Embedder
from ..kb.directory import create_kb, open_kb, tokenizer_version
from ..model.contracts import AnswerStatus, Document, Principal
from ..parse.chunking import chunk_for_index
from ..parse.documents import make_document
from ..pipeline.composer import Composer
from ..pipeline.engine import Answer, Engine
from ..pipeline.retrieve import Retrieval
from ..reader.model import ReadingModel
from ..text.sentences import split_sentences
from ..text.tokens import tokenize
from .qa import QAItem, QASet, load_qa

TENANT = "bench"
ROLE = "public"
VALID_FROM = "2000-01-01T00:00:00Z"
AS_OF = datetime(2026, 1, 1, tzinfo=UTC)
TARGET_VERSION = None
"""The paragraphs carry no product version: every question asks about all versions."""

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """NFKC, lowercase, no punctuation or symbols, no English articles, no whitespace."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(" " if unicodedata.category(ch)[0] in "PSZ" else ch for ch in text)
    return "".join(_ARTICLES.sub(" ", text).split())


def contains_answer(texts: Sequence[str], answers: Sequence[str]) -> bool:
    """Whether any text contains any (non-empty, normalized) gold answer."""
    golds = [g for g in (normalize_answer(a) for a in answers) if g]
    said = [normalize_answer(t) for t in texts]
    return any(gold in text for gold in golds for text in said)


def paragraph_documents(qa: QASet) -> list[Document]:
    """The paragraphs as documents of the bench tenant (public, official, always valid)."""
    return [
        make_document(
            {
                "id": paragraph_id,
                "revision": "1",
                "title": title or paragraph_id,
                "tenant": TENANT,
                "valid_from": VALID_FROM,
                "status": "active",
                "visibility": "public",
                "trust": "official",
            },
            text,
        )
        for paragraph_id, title, text in qa.paragraphs
        if text.strip()
    ]


def load_into(kb: Engine, documents: Sequence[Document]) -> None:
    """Add ``documents`` (chunked for the index) to ``kb``'s catalog and bring the index up to date."""
    catalog: Catalog = kb.catalog
    catalog.define_roles(TENANT, [ROLE])
    with catalog.store.transaction():
        for document in documents:
            catalog.add(document, chunk_for_index(document))
    kb.reindex()


def top1_sentence(retrieval: Retrieval, question: str) -> str | None:
    """The sentence of the top evidence chunk sharing the most question tokens (first on ties)."""
    if not retrieval.packet.hits:
        return None
    text = retrieval.packet.hits[0].chunk.text
    wanted = set(tokenize(question))
    best: tuple[int, str] | None = None
    for start, end in split_sentences(text):
        overlap = len(wanted & set(tokenize(text[start:end])))
        if best is None or overlap > best[0]:
            best = (overlap, text[start:end])
    return best[1] if best else None


@dataclass(frozen=True, slots=True)
class ItemResult:
    """What happened to one question."""

    question_id: str
    impossible: bool
    status: str
    contained: bool
    cited_gold: bool
    baseline_contained: bool
    latency_ms: float
    reasons: tuple[str, ...]
    composition: dict[str, Any] | None = None


def ask_item(kb: Engine, item: QAItem) -> tuple[ItemResult, Answer]:
    """Ask one question as a public user of the bench tenant and score the answer."""
    started = time.perf_counter()
    query = kb.query(item.question, Principal.of(TENANT, ROLE), TARGET_VERSION, AS_OF)
    retrieval = kb.retrieve(query)
    answer = kb.write(kb.answer(retrieval), [retrieval])
    latency = (time.perf_counter() - started) * 1000.0
    answered = answer.status is not AnswerStatus.ABSTAIN
    claims = [c.text for c in answer.claims]
    baseline = top1_sentence(retrieval, item.question)
    result = ItemResult(
        question_id=item.question_id,
        impossible=item.impossible,
        status=answer.status.value,
        contained=answered and contains_answer(claims, item.answers),
        cited_gold=answered and any(c.source_id == item.paragraph_id for c in answer.citations),
        baseline_contained=baseline is not None and contains_answer([baseline], item.answers),
        latency_ms=latency,
        reasons=answer.reasons,
        composition=composition_scores(answer.trace),
    )
    return result, answer


def _rate(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def _percentile(values: Sequence[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))], 1)


def summarize(results: Sequence[ItemResult]) -> dict[str, Any]:
    """Aggregate metrics (see the module docstring); an undefined rate is ``None``."""
    answerable = [r for r in results if not r.impossible]
    unanswerable = [r for r in results if r.impossible]

    def statuses(rows: Sequence[ItemResult]) -> dict[str, int]:
        return {s.value: sum(r.status == s.value for r in rows) for s in AnswerStatus}

    answered = [r for r in answerable if r.status != AnswerStatus.ABSTAIN.value]
    contained = sum(r.contained for r in answerable)
    abstained_unanswerable = sum(r.status == AnswerStatus.ABSTAIN.value for r in unanswerable)
    baseline_contained = sum(r.baseline_contained for r in answerable)
    latencies = [r.latency_ms for r in results]
    written = [r.composition for r in results if r.composition is not None]
    extra = {"composition": composition_summary(written)} if written else {}
    return {
        **extra,
        "questions": len(results),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "status_answerable": statuses(answerable),
        "status_unanswerable": statuses(unanswerable),
        "answer_contained": _rate(contained, len(answerable)),
        "contained_when_answered": _rate(contained, len(answered)),
        "citation_accuracy": _rate(sum(r.cited_gold for r in answered), len(answered)),
        "false_abstain": _rate(len(answerable) - len(answered), len(answerable)),
        "false_answer": _rate(len(unanswerable) - abstained_unanswerable, len(unanswerable)),
        "correct_outcome": _rate(contained + abstained_unanswerable, len(results)),
        "baseline_top1_sentence": {
            "answer_contained": _rate(baseline_contained, len(answerable)),
            "correct_outcome": _rate(baseline_contained, len(results)),
        },
        "always_abstain_correct_outcome": _rate(len(unanswerable), len(results)),
        "latency_ms": {"p50": _percentile(latencies, 0.5), "p95": _percentile(latencies, 0.95)},
        "mean_latency_ms": round(statistics.fmean(latencies), 1) if latencies else None,
    }


def run_answers(
    kb: Engine,
    items: Sequence[QAItem],
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[ItemResult]:
    """Ask every item in order; ``progress(done, total)`` after each."""
    results = []
    for done, item in enumerate(items, start=1):
        results.append(ask_item(kb, item)[0])
        if progress is not None:
            progress(done, len(items))
    return results


def build_kb(qa: QASet, embedder: Embedder, folder: Path) -> Engine:
    """A knowledge base in ``folder`` holding ``qa``'s paragraphs (reopened if it already does)."""
    marker = folder / "corpus.sha256"
    digest = f"{qa.corpus_digest()} {tokenizer_version()}"
    if marker.is_file() and marker.read_text().strip() == digest:
        return open_kb(folder, embedder)
    if folder.exists() and any(folder.iterdir()):
        raise FileExistsError(f"{str(folder)!r} holds something else; remove it or pick another --workdir")
    kb = create_kb(folder, embedder)
    load_into(kb, paragraph_documents(qa))
    marker.write_text(digest + "\n")
    return kb


def benchmark_answers(
    folder: Path,
    *,
    split: str | None,
    part: str,
    sample: int | None,
    seed: int,
    embedder: Embedder,
    workdir: Path,
    progress: Callable[[int, int], None] | None = None,
    composer: Composer | None = None,
    reader: ReadingModel | None = None,
) -> dict[str, Any]:
    """Run the answer benchmark on ``part`` of a QA folder; the report as plain data.

    ``composer`` writes the claims of each decided answer (``None``: the extractive ones)."""
    qa = load_qa(folder, split, part)
    kb = build_kb(qa, embedder, workdir / f"{qa.name}-{qa.split}")
    kb.composer = composer
    kb.reader = reader
    items = qa.sample(sample, seed)
    results = run_answers(kb, items, progress=progress)
    return {
        "dataset": {
            "name": qa.name,
            "split": qa.split,
            "part": part,
            "paragraphs": len(qa.paragraphs),
            "questions_in_part": len(qa.items),
            "sampled": len(items),
            "seed": seed,
        },
        "embedder": embedder.model_id,
        "composer": getattr(composer, "name", "extractive"),
        "reader": reader.version if reader is not None else None,
        "summary": summarize(results),
        "items": [
            {
                "id": r.question_id,
                "impossible": r.impossible,
                "status": r.status,
                "contained": r.contained,
                "cited_gold": r.cited_gold,
                "baseline_contained": r.baseline_contained,
                "reasons": list(r.reasons),
                **({"composition": r.composition} if r.composition is not None else {}),
            }
            for r in results
        ],
    }


def summary_table(report: Mapping[str, Any]) -> str:
    """The report's headline numbers as a Markdown table."""
    s = report["summary"]
    d = report["dataset"]

    def num(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    rows = [
        ("questions", f"{s['questions']} ({s['answerable']} answerable, {s['unanswerable']} not)"),
        ("status, answerable", ", ".join(f"{k} {v}" for k, v in s["status_answerable"].items())),
        ("status, unanswerable", ", ".join(f"{k} {v}" for k, v in s["status_unanswerable"].items())),
        ("answerable: gold answer contained", num(s["answer_contained"])),
        ("contained when answered", num(s["contained_when_answered"])),
        ("citation accuracy (answered)", num(s["citation_accuracy"])),
        ("false abstain (answerable)", num(s["false_abstain"])),
        ("false answer (unanswerable)", num(s["false_answer"])),
        ("correct-outcome rate", num(s["correct_outcome"])),
        ("baseline top-1 sentence: contained", num(s["baseline_top1_sentence"]["answer_contained"])),
        ("baseline top-1 sentence: correct outcome", num(s["baseline_top1_sentence"]["correct_outcome"])),
        ("always abstain: correct outcome", num(s["always_abstain_correct_outcome"])),
        ("latency p50 / p95 ms", f"{s['latency_ms']['p50']} / {s['latency_ms']['p95']}"),
    ]
    written = s.get("composition")
    if written:
        rows += [
            ("written claims verified (faithfulness)",
             f"{written['claims_verified']}/{written['claims_written']}"
             f" = {num(written['faithfulness'])}"),
            ("citation precision / recall (written)",
             f"{num(written['citation_precision'])} / {num(written['citation_recall'])}"),
            ("composer outcomes", ", ".join(f"{k} {v}" for k, v in written["outcomes"].items())),
            ("dropped claims", ", ".join(f"{k} {v}" for k, v in written["dropped"].items()) or "none"),
        ]  # fmt: skip
    title = f"{d['name']} {d['split']} part {d['part']} ({d['sampled']} sampled, seed {d['seed']})"
    lines = [f"| {title} | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]
    return "\n".join(lines) + "\n"
