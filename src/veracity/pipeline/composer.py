"""Composers: what writes the claims once the policy has decided answer, partial or abstain.

The policy runs first (:func:`veracity.pipeline.answer.compose`): it decides the status, which
sub-questions or facts are covered, and an extractive claim for each (sentences copied from the
chunk they cite). A :class:`Composer` then takes that decided answer and the evidence behind it
and returns the answer to show:

- :class:`ExtractiveComposer` (the default) returns it unchanged: offline, reproducible;
- :class:`veracity.pipeline.llm.composer.LLMComposer` has a language model write the covered
  part in its own words, verifies every claim against the text it cites, and falls back to the
  decided answer when the model is unavailable or nothing verifies.

A composer may never widen the answer: it writes nothing for an abstain, and nothing about
what the policy found missing.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..model.contracts import Citation, Document, Hit
from ..text.questions import AnalyzedQuestion
from .candidates import Embed, TermWeights
from .outcome import Answer
from .retrieve import Retrieval


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the decided answer rests on: the usable evidence hits (best first, no quarantined
    chunk, no chunk that lost a settled conflict), their documents and citations (by chunk id),
    the question's term weights and the embedder (``None`` without the dense channel).
    ``question`` is the question as analysed for the ask (its text: ``question.text``)."""

    question: AnalyzedQuestion
    hits: tuple[Hit, ...]
    documents: Mapping[str, Document]
    citations: Mapping[str, Citation]
    weights: TermWeights = field(default_factory=lambda: TermWeights(chunks=0, frequencies={}))
    embed: Embed | None = None
    version: str | None = None
    """The product version asked about (``None``: no particular one)."""
    required_fact_ids: tuple[str, ...] | None = None


def evidence_of(
    retrievals: Sequence[Retrieval],
    embed: Embed | None = None,
) -> Evidence:
    """The evidence of an answer decided over ``retrievals`` (the first is the question's own;
    more come from the retry). ``embed`` is kept only when the first ran its dense channel."""
    first = retrievals[0]
    hits: list[Hit] = []
    citations: dict[str, Citation] = {}
    for retrieval in retrievals:
        packet = retrieval.packet
        superseded = packet.superseded_chunk_ids
        for hit in packet.hits:
            if hit.chunk.chunk_id in superseded or hit.chunk.chunk_id in citations:
                continue
            hits.append(hit)
            citations[hit.chunk.chunk_id] = packet.citation_for(hit.chunk.chunk_id)
    dense: npt.NDArray[np.float32] | None = first.query_vector
    return Evidence(
        question=first.question,
        hits=tuple(hits),
        documents=_layered([r.documents for r in retrievals]),
        citations=citations,
        weights=first.term_weights,
        embed=embed if dense is not None else None,
        version=first.query.version,
        required_fact_ids=first.query.required_fact_ids,
    )


@runtime_checkable
class Composer(Protocol):
    """Writes the claims of a decided answer (see the module docstring).

    ``compose`` returns an answer whose status is never better than ``decided``'s, whose
    claims each cite the evidence, and whose abstain is ``decided`` itself.
    """

    name: str

    def compose(self, decided: Answer, evidence: Evidence) -> Answer:
        """The answer to show for ``decided``."""
        ...


class ExtractiveComposer:
    """The decided answer as it is: every claim copied from the chunk it cites."""

    name = "extractive"

    def compose(self, decided: Answer, evidence: Evidence) -> Answer:
        """``decided``, unchanged."""
        return decided


def _layered(layers: Sequence[Mapping[str, Document]]) -> Mapping[str, Document]:
    """The retrievals' documents, a later one's winning as an update would, without copying them
    (an index's mapping holds every document: a copy per ask cost milliseconds at 1M chunks)."""
    if len(layers) == 1:
        return layers[0]
    # read only: ChainMap is typed over mutable maps but only looked up here
    return ChainMap(*(cast(MutableMapping[str, Document], layer) for layer in reversed(layers)))
