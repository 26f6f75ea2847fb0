"""An answer as a service returns it: ``veracity ask --json``'s data plus what serving added.

:class:`ServedAnswer` holds the answer, where it came from (cache ``hit`` or
``miss``), the degradations it was computed under, each citation's document
title and shown source path, and, for an operator who asked for it, the
explanation. :meth:`ServedAnswer.as_dict` is :func:`veracity.pipeline.render.answer_dict`
(the trace in the caller's audience: an asker's view for asker keys, the
operator's for operator keys) with those fields added, and
:func:`reason_words` says in words why an answer is partial or an abstain.
:meth:`ServedAnswer.events` cuts the same data into the server-sent events
the page reads: ``status``, one ``claim`` each, one ``citation`` each,
``explain`` (operators), ``trace`` (when asked), ``done``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ...kb.explain import Explanation
from ...model.contracts import Citation, Document, Hit
from ...pipeline.outcome import Answer
from ...pipeline.render import answer_dict, box_dict, citation_dict, page_label
from ...pipeline.trace import Audience
from .degrade import Degradation

__all__ = ["CitedSource", "ServedAnswer", "cited_url", "hit_dict", "reason_words", "served_citation"]


@dataclass(frozen=True, slots=True)
class CitedSource:
    """What a reader needs beside a citation: the document's title and its shown source path."""

    citation_id: int
    title: str
    path: str
    url: str | None = None


def _heading_key(text: str) -> str:
    # a page's heading and the parsed heading may differ in spacing, case and permalink glyphs
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def cited_url(document: Document, heading_path: Sequence[str]) -> str | None:
    """The web address a citation links to: a website page's URL (its ``source_url``, which is
    also its source id) with the anchor of the deepest cited heading the page gave an id;
    ``None`` for other documents (a link no one can follow from the source id is never shown)."""
    metadata = dict(document.extra_metadata)
    if "source_url" not in metadata:
        return None
    url = json.loads(metadata["source_url"])
    if not isinstance(url, str) or url != document.source_id or not url.startswith(("http://", "https://")):
        return None
    anchors = json.loads(metadata.get("source_anchors", "[]"))
    by_heading = {
        _heading_key(str(pair[0])): str(pair[1])
        for pair in anchors
        if isinstance(pair, list) and len(pair) == 2
    }
    for heading in reversed(heading_path):
        if anchor := by_heading.get(_heading_key(heading)):
            return f"{url}#{quote(anchor, safe='-._~')}"
    return url


_DEGRADED_WORDS = {
    Degradation.DENSE_UNAVAILABLE: (
        "searched by keywords only: the embedding model is unavailable",
        "仅按关键词检索：向量模型不可用",
    ),
    Degradation.RERANK_UNAVAILABLE: (
        "candidates kept in fused order: the reranker is unavailable",
        "候选按融合顺序排列：重排序器不可用",
    ),
    Degradation.CATALOG_UNAVAILABLE: (
        "the catalog could not be checked, so nothing is said",
        "无法核对目录，因此不作任何回答",
    ),
}


def _words(code: str, en: str, zh: str) -> dict[str, str]:
    return {"code": code, "en": en, "zh": zh}


def reason_words(answer: Answer, degraded: tuple[Degradation, ...] = ()) -> list[dict[str, str]]:
    """Why the answer is what it is, in English and Chinese: what is missing, a disagreement, no evidence.

    Each item is ``{"code", "en", "zh"}``; an answer that fully answers has
    none (beyond degradations).
    """
    reasons = answer.reasons
    words: list[dict[str, str]] = []
    if Degradation.CATALOG_UNAVAILABLE in degraded or "catalog_unavailable" in reasons:
        en, zh = _DEGRADED_WORDS[Degradation.CATALOG_UNAVAILABLE]
        return [_words("catalog_unavailable", en, zh)]
    if any(r.startswith("conflict:") for r in reasons):
        words.append(_words("conflict", "sources disagree", "来源说法不一致"))
    for text in answer.uncovered_subquestions if answer.claims else ():
        words.append(_words("missing", f"missing: {text}", f"缺少：{text}"))
    if answer.missing_fact_ids and answer.claims:
        listed = ", ".join(answer.missing_fact_ids)
        words.append(_words("missing", f"missing: {listed}", f"缺少：{listed}"))
    if not answer.claims and not words:
        words.append(
            _words("no_evidence", "nothing you may see covers this", "你可查看的资料中没有涵盖这个问题的内容")
        )
    for kind in degraded:
        en, zh = _DEGRADED_WORDS[kind]
        words.append(_words(kind.value, en, zh))
    return words


def served_citation(citation: Citation, source: CitedSource | None) -> dict[str, Any]:
    """A citation as the service sends it: its data, the document's title, path and web address,
    its pages in words and its version range (the page words versions in its own language)."""
    return {
        **citation_dict(citation),
        "title": source.title if source else "",
        "path": source.path if source else "",
        "url": source.url if source else None,
        "pages": page_label(citation.page_start, citation.page_end),
        "version_range": [citation.version_min, citation.version_max],
    }


@dataclass(frozen=True, slots=True)
class ServedAnswer:
    """One answer served to one caller (see the module docstring)."""

    answer: Answer
    cache: str
    degraded: tuple[Degradation, ...]
    sources: tuple[CitedSource, ...]
    audience: Audience
    explain: bool = False
    explanation: Explanation | None = None
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """``ask --json``'s data, plus ``cache``, ``degraded``, ``reason_words`` and citation titles."""
        data = answer_dict(self.answer, explain=self.explain, audience=self.audience)
        by_id = {s.citation_id: s for s in self.sources}
        data["citations"] = [served_citation(c, by_id.get(c.citation_id)) for c in self.answer.citations]
        # the answer's own (the LLM could not write it) first, then what the service stood in for
        degraded = list(dict.fromkeys([*data["degraded"], *(d.value for d in self.degraded)]))
        data["cache"] = self.cache
        data["degraded"] = degraded
        data["reason_words"] = reason_words(self.answer, self.degraded)
        if "trace" in data:
            data["trace"]["cache"] = self.cache
            data["trace"]["degraded"] = degraded
        if self.explanation is not None:
            data["explanation"] = self.explanation.as_dict()
        return data

    def events(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(event, data)`` pairs for a server-sent stream, in reading order."""
        data = self.as_dict()
        yield "status", {
            key: data[key]
            for key in ("question", "status", "reasons", "reason_words", "missing_fact_ids",
                        "uncovered_subquestions", "cache", "degraded")
        }  # fmt: skip
        for number, claim in enumerate(data["claims"], start=1):
            yield "claim", {"number": number, **claim}
        for citation in data["citations"]:
            yield "citation", citation
        if "explanation" in data:
            yield "explain", data["explanation"]
        if "trace" in data:
            yield "trace", data["trace"]
        yield "done", {"cache": self.cache, "milliseconds": round(self.seconds * 1000, 3)}


def hit_dict(hit: Hit, documents: Mapping[str, Document]) -> dict[str, Any]:
    """A searched chunk for tools that bring their own generator: where it is, its text, its scores."""
    chunk, scores = hit.chunk, hit.scores
    document = documents[chunk.document_id]
    return {
        "rank": hit.rank,
        "chunk_id": chunk.chunk_id,
        "document_id": chunk.document_id,
        "id": document.source_id,
        "title": document.title,
        "heading_path": list(chunk.heading_path),
        "pages": page_label(chunk.page_start, chunk.page_end),
        "boxes": [box_dict(box) for box in chunk.boxes],
        "text": chunk.text,
        "scores": {
            "lexical": scores.lexical,
            "semantic": scores.semantic,
            "fusion": scores.fusion,
            "rerank": scores.rerank,
        },
    }
