"""Sentence choice, second stage: the sentence reader reads the best candidates again.

The sentence model (:mod:`veracity.pipeline.decision`) ranks every candidate sentence from its
features; the sentence reader (:mod:`veracity.reader.choice`, a cross-encoder fine-tuned here)
then reads the question with each of the first :data:`CHOICE_DEPTH` of them and gives a logit
against "no answer". The *choice model*, a logistic model over :data:`CHOICE_FEATURES` (the
sentence model's logit and the reader's) fitted listwise on the tuning data
(``veracity.bench.train_answers --chooser``), orders those candidates; the rest follow in their
first-stage order. The reader's logit is kept in the candidate's features as ``reader``, so the
answerability model and the trace see it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from .candidates import Candidate

if TYPE_CHECKING:
    from ..reader.choice import ChoiceModel


class LogisticModel(Protocol):
    """What the choice stage needs of :class:`veracity.pipeline.decision.LogisticModel` (named
    here so that this module, which the decision imports, does not import it back)."""

    def logit(self, features: Mapping[str, float]) -> float: ...


class Ranked(Protocol):
    """What the choice stage reads of :class:`veracity.pipeline.decision.Ranked`."""

    @property
    def score(self) -> float: ...


RankedT = TypeVar("RankedT", bound=Ranked)

CHOICE_DEPTH: Final = 8
"""First-stage candidates the sentence reader reads (about 60 tokens each)."""
CHOICE_FEATURES: Final = ("sentence", "reader")
"""Features of the choice model: the first stage's logit and the sentence reader's."""


def reader_input(
    subject: str, sentence: str, table_header: str = "", previous: str = ""
) -> tuple[str, str, str]:
    """What the sentence reader reads of a candidate: its subject line, its sentence (a table
    row with its header above it) and the sentence before it (a reader trained with context
    reads it; none for a table row)."""
    if table_header:
        return subject, f"{table_header}\n{sentence}", ""
    return subject, sentence, previous


def candidate_input(candidate: Candidate) -> tuple[str, str, str]:
    """:func:`reader_input` of a run-time candidate."""
    sentence = candidate.hit.chunk.text[candidate.start : candidate.end]
    return reader_input(candidate.subject, sentence, candidate.table_header, candidate.previous)


def second_stage(choice: LogisticModel, first: Sequence[float], reader: Sequence[float]) -> list[float]:
    """Scores of every candidate (``first``: first-stage logits, best first; ``reader``: the
    reader's logits of the head): the choice model's logit for the head, and for the rest their
    first-stage order below the head's lowest."""
    head = [choice.logit({"sentence": s, "reader": r}) for s, r in zip(first, reader, strict=False)]
    if not head:
        return list(first)
    tail = first[len(head) :]
    top_tail = max(tail, default=0.0)
    return head + [min(head) - 1.0 - (top_tail - score) for score in tail]


def rechoose(
    choice: LogisticModel,
    chooser: ChoiceModel,
    question: str,
    ranked: Sequence[tuple[RankedT, Candidate]],
    *,
    depth: int = CHOICE_DEPTH,
) -> list[tuple[RankedT, Candidate]]:
    """``ranked`` (first stage, best first) with its first ``depth`` reordered by the choice model;
    each of them carries its reader logit as the feature ``reader``; every candidate's score is
    :func:`second_stage`'s."""
    head = list(ranked[:depth])
    logits = chooser.scores(question, [candidate_input(c) for _, c in head]) if head else []
    scores = second_stage(choice, [r.score for r, _ in ranked], logits)
    out = []
    for index in sorted(range(len(ranked)), key=lambda i: (-scores[i], i)):
        ranked_one, candidate = ranked[index]
        if index < len(logits):
            features = {**candidate.features, "reader": logits[index]}
            ranked_one, candidate = (
                _replaced(ranked_one, features=features),
                replace(candidate, features=features),
            )
        out.append((_replaced(ranked_one, score=scores[index]), candidate))
    return out


class TimedChoice:
    """A sentence reader that adds up the milliseconds spent in ``inner`` (the trace's stage
    ``sentence_reader``)."""

    def __init__(self, inner: ChoiceModel) -> None:
        self.inner, self.name, self.version = inner, inner.name, inner.version
        self.ms = 0.0

    def scores(self, question: str, candidates: Sequence[tuple[str, ...]]) -> list[float]:
        """``inner``'s scores, timed."""
        started = time.perf_counter()
        try:
            return self.inner.scores(question, candidates)
        finally:
            self.ms += (time.perf_counter() - started) * 1000


def _replaced(ranked: RankedT, **changes: Any) -> RankedT:
    # a dataclass instance (``Ranked`` in decision.py); typed by the protocol it is read through
    return replace(ranked, **changes)  # type: ignore[type-var]
