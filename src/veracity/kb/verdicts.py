"""Injection verdicts judged when text enters the knowledge base, so an ask only reads them.

The detector (:mod:`veracity.pipeline.injection`) judges every chunk of a
source that is not official (and the whole body of an untrusted one, which
decides whether its other chunks are held back) as the document is stored;
the catalog keeps the signals under :func:`~veracity.pipeline.injection.verdict_key`.
Official text is never quarantined, so it is never judged. A store without a
verdict table (PostgreSQL, memory) keeps nothing: its asks judge as before.
``veracity reindex`` judges what a newer detector has not judged yet
(:func:`judge_missing`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..model.contracts import Chunk, Document, Trust
from ..pipeline.injection import guard_in_use, judged_signals, verdict_key

__all__ = ["judge_missing", "store_verdicts", "texts_to_judge"]


def texts_to_judge(document: Document, chunks: Sequence[Chunk]) -> list[tuple[str, tuple[str, ...]]]:
    """``(text, heading_path)`` the answer step may ask a verdict on, for ``document``."""
    if document.trust is Trust.OFFICIAL:
        return []
    texts = [(chunk.text, tuple(chunk.heading_path)) for chunk in chunks]
    if document.trust is Trust.UNTRUSTED:
        texts.append((document.body, ()))
    return texts


def _keeps_verdicts(store: Any) -> bool:
    return callable(getattr(store, "store_signals", None)) and guard_in_use() is None


def store_verdicts(store: Any, document: Document, chunks: Sequence[Chunk]) -> int:
    """Judge and keep ``document``'s texts in ``store``; how many were judged."""
    texts = texts_to_judge(document, chunks) if _keeps_verdicts(store) else []
    if texts:
        store.store_signals(judged_signals(texts))
    return len(texts)


def judge_missing(store: Any, documents: Iterable[tuple[Document, Sequence[Chunk]]]) -> int:
    """Judge and keep the texts of ``documents`` that have no verdict under this detector yet."""
    if not _keeps_verdicts(store):
        return 0
    texts = [text for document, chunks in documents for text in texts_to_judge(document, chunks)]
    keys = [verdict_key(text, heading) for text, heading in texts]
    known = store.stored_verdict_keys(keys)
    missing = [text for text, key in zip(texts, keys, strict=True) if key not in known]
    store.store_signals(judged_signals(missing))
    return len(missing)
