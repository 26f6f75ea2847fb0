"""The answer decision by the reader: which sentence answers a sub-question, and whether to say it.

The reader (:mod:`veracity.reader.model`, a model fine-tuned here) reads the sub-question against
the first :data:`READ_PASSAGES` evidence chunks of one trust tier (each with its document title
and heading path) and finds, per chunk, the best answer span and how much more likely it is than
no answer (the *answer score*). The chunk with the best score holds the claim:

- the claim is the sentence(s) of that chunk the span lies in (a fenced code block whole; a table
  row with its header and separator rows; a sentence too short to stand alone with the one after
  it, or before it when it ends the chunk);
- the sub-question counts as covered when the answer score reaches the reader's threshold for the
  question's language (chosen on tuning data for a stated false-answer budget, recorded in the
  reader's model card), else it is not covered and nothing is said about it.

The trace gets the answer score, the threshold and the parts of the score: the score is the
reader's, not a probability.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Final

from ..model.contracts import Document, Hit, Query
from ..reader.head import logistic
from ..reader.model import Reading, ReadingModel
from ..text.questions import AnalyzedQuestion, SubQuestion
from ..text.sentences import as_units, split_sentences
from ..text.tokens import is_cjk_term
from .candidates import Candidate, code_in, is_fragment, labels_of, table_headers
from .decision import Decision, evidence_terms
from .rerank import Reranker, ranked

READ_PASSAGES: Final = 4
"""Evidence chunks of a tier the reader reads per sub-question, best ranked first."""


def claim_bounds(text: str, units: Sequence[tuple[int, int]], start: int, end: int) -> tuple[int, int, str]:
    """The claim around the span ``[start, end)`` of ``text``: its start, end and, for a table row,
    the header and separator rows it carries (see the module docstring)."""
    if not units:
        return 0, len(text), ""
    inside = [i for i, (s, e) in enumerate(units) if s < max(end, start + 1) and start < e] or [
        min(range(len(units)), key=lambda i: abs(units[i][0] - start))
    ]
    labels = labels_of(text, units)
    inside = [i for i in inside if i not in labels] or [min(inside[-1] + 1, len(units) - 1)]
    first, last = inside[0], inside[-1]
    headers = table_headers(text, units)
    if first == last and headers.get(first):
        return units[first][0], units[first][1], headers[first]
    if first == last and is_fragment(text[units[first][0] : units[first][1]]):
        # a fragment leans on the sentence before it; one that opens its chunk (or follows a
        # title) on the sentence after it ("No." above its explanation); never on a table row
        opens = first == 0 or first - 1 in labels
        neighbour = first + 1 if opens else first - 1
        if 0 <= neighbour < len(units) and neighbour not in labels and neighbour not in headers:
            first, last = min(first, neighbour), max(last, neighbour)
    return units[first][0], units[last][1], ""


def subject_of(hit: Hit, documents: Mapping[str, Document]) -> str:
    """The title and heading path the reader reads above a chunk."""
    document = documents[hit.chunk.document_id]
    parts = [document.title, *hit.chunk.heading_path]
    return " > ".join(p for i, p in enumerate(parts) if p and p not in parts[:i])


def read(
    reader: ReadingModel, sub: SubQuestion, hits: Sequence[Hit], documents: Mapping[str, Document]
) -> list[tuple[Hit, Reading]]:
    """The reader's reading of each of the first :data:`READ_PASSAGES` hits, best first (ties:
    evidence order)."""
    chosen = list(hits[:READ_PASSAGES])
    readings = reader.read(sub.text, [(subject_of(h, documents), h.chunk.text) for h in chosen])
    order = sorted(range(len(chosen)), key=lambda i: (-readings[i].score, i))
    return [(chosen[i], readings[i]) for i in order]


def reader_decide(
    index: int,
    sub: SubQuestion,
    hits: Sequence[Hit],
    documents: Mapping[str, Document],
    reader: ReadingModel,
    threshold: float,
    *,
    tier: str = "official",
) -> tuple[Decision, Candidate | None, list[tuple[Hit, Reading]]]:
    """Decide ``sub`` on ``hits`` with the reader: the decision, the claim's candidate when it is
    answered, and the readings (best first)."""
    readings = read(reader, sub, hits, documents) if hits else []
    evidence_tokens, evidence_text = evidence_terms(hits, documents)
    missing = tuple(
        t for t in sub.terms if t not in evidence_tokens and not (is_cjk_term(t) and t in evidence_text)
    )
    if not readings or readings[0][1].start < 0:
        decision = Decision(index, float("-inf"), False, (), missing, threshold, tier)
        return decision, None, readings
    hit, reading = readings[0]
    runner_up = readings[1][1].score if len(readings) > 1 else reading.score
    features = (
        ("reader_null", round(reading.null_score, 6)),
        ("reader_runner_up", round(runner_up, 6)),
        ("reader_span", round(reading.span_score, 6)),
        ("rank", float(hits.index(hit) + 1)),
    )
    answered = reading.score >= threshold
    decision = Decision(index, reading.score, answered, features, missing, threshold, tier)
    if not answered:
        return decision, None, readings
    text = hit.chunk.text
    units = as_units(split_sentences(text), code_in(hit.chunk, documents[hit.chunk.document_id]))
    start, end, header = claim_bounds(text, units, reading.start, reading.end)
    candidate = Candidate(
        hit=hit, start=start, end=end, claim_start=start, features=dict(features), table_header=header
    )
    return decision, candidate, readings


READER_WEIGHT: Final = 0.5
"""How much the reader's belief that a chunk answers (a logistic of its answer score) adds to the
base reranker's score."""
RERANK_DEPTH: Final = 8
"""Candidates (in the base reranker's order) the reader reads; the rest keep their base order."""


Passages = Sequence[tuple[str, str]]
"""``(subject, text)`` per passage a model reads."""


class HeadReranker:
    """A :class:`~veracity.pipeline.rerank.Reranker` that keeps ``base``'s order and lets a model read
    the first ``depth`` hits as ``(subject, text)`` passages; :meth:`rescored` turns what it read
    into scores. Ties break by chunk id."""

    base: Reranker
    depth: int

    def rerank(
        self,
        query: Query,
        hits: Sequence[Hit],
        documents: Mapping[str, Document],
        *,
        question: AnalyzedQuestion,
    ) -> list[Hit]:
        """Score and reorder ``hits`` (see the class docstring)."""
        ordered = self.base.rerank(query, hits, documents, question=question)
        passages = [(subject_of(hit, documents), hit.chunk.text) for hit in ordered[: self.depth]]
        return ranked(self.rescored(ordered, passages, question.text))

    def rescored(self, ordered: Sequence[Hit], passages: Passages, question: str) -> list[Hit]:
        """``ordered`` with new scores, the first ``len(passages)`` read as ``passages``."""
        raise NotImplementedError


class ReaderReranker(HeadReranker):
    """The base reranker's order, then the reader reads the first :data:`RERANK_DEPTH` candidates and
    adds ``reader`` (the logistic of its answer score, in [0, 1]) to their score as a named part."""

    name = "reader-v1"

    def __init__(self, reader: ReadingModel, base: Reranker, *, depth: int = RERANK_DEPTH) -> None:
        self.reader, self.base, self.depth = reader, base, depth

    def rescored(self, ordered: Sequence[Hit], passages: Passages, question: str) -> list[Hit]:
        readings = self.reader.read(question, list(passages))
        scored = []
        for position, hit in enumerate(ordered):
            belief = logistic(readings[position].score if position < len(passages) else -50.0)
            parts = (*hit.scores.rerank_parts, ("reader", round(belief, 6)))
            total = (hit.scores.rerank or 0.0) + READER_WEIGHT * belief
            scored.append(replace(hit, scores=replace(hit.scores, rerank=total, rerank_parts=parts)))
        return scored
