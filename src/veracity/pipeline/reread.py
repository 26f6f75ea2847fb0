"""Passage rerank by the sentence reader: it rereads the first passages of a ranking.

The sentence reader (:mod:`veracity.reader.choice`) reads the question with each sentence of the
first :data:`REREAD_DEPTH` passages (at most :data:`SENTENCES_PER_PASSAGE` each, with the passage's
title and heading path as the subject). A passage's *belief* is the logistic of its best
sentence's logit. Those passages are then ordered by belief alone, above the rest, which keep
their order: the reader judges whether a passage answers, the base ranking only which passages
it reads. Used by :class:`ChooserReranker` and the retrieval benchmark's
``hybrid+rerank+reader`` channel.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from ..model.contracts import Hit
from ..reader.head import logistic
from ..text.sentences import split_sentences
from .reading import HeadReranker, Passages

if TYPE_CHECKING:
    from ..reader.choice import ChoiceModel
    from .rerank import Reranker

REREAD_DEPTH: Final = 8
"""Passages the sentence reader re-reads when it reranks (the fused order's head)."""
SENTENCES_PER_PASSAGE: Final = 12
"""A bound on the pairs read per passage (a long passage's later sentences are not read)."""


def passage_beliefs(chooser: ChoiceModel, question: str, passages: Passages) -> list[float]:
    """Per ``(subject, text)`` passage, the logistic of its best sentence's reader logit (0 for a
    passage without a sentence)."""
    pairs: list[tuple[str, str]] = []
    owners: list[int] = []
    for index, (subject, text) in enumerate(passages):
        for begin, end in split_sentences(text)[:SENTENCES_PER_PASSAGE]:
            pairs.append((subject, text[begin:end]))
            owners.append(index)
    best = [-math.inf] * len(passages)
    for owner, logit in zip(owners, chooser.scores(question, pairs) if pairs else [], strict=True):
        best[owner] = max(best[owner], logit)
    return [logistic(b) if b > -math.inf else 0.0 for b in best]


def reread_scores(base: Sequence[float], beliefs: Sequence[float]) -> list[float]:
    """Scores after rereading ``base`` (best first): the first ``len(beliefs)`` get the head's best
    base score plus their belief, so they sort by belief above the rest, which keep ``base``."""
    if not beliefs:
        return list(base)
    top = max(base[: len(beliefs)])
    return [top + b for b in beliefs] + list(base[len(beliefs) :])


class ChooserReranker(HeadReranker):
    """``base``'s order, then the sentence reader rereads the first ``depth`` hits (see the module
    docstring); its belief is the named part ``reader`` of the score breakdown."""

    name = "chooser-v1"

    def __init__(self, chooser: ChoiceModel, base: Reranker, *, depth: int = REREAD_DEPTH) -> None:
        self.chooser, self.base, self.depth = chooser, base, depth

    def rescored(self, ordered: Sequence[Hit], passages: Passages, question: str) -> list[Hit]:
        beliefs = passage_beliefs(self.chooser, question, passages)
        scores = reread_scores([hit.scores.rerank or 0.0 for hit in ordered], beliefs)
        scored = []
        for position, (hit, score) in enumerate(zip(ordered, scores, strict=True)):
            parts = hit.scores.rerank_parts
            if position < len(beliefs):
                parts = (*parts, ("reader", round(beliefs[position], 6)))
            scored.append(replace(hit, scores=replace(hit.scores, rerank=score, rerank_parts=parts)))
        return scored
