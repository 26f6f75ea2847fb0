"""Injection verdicts judged when text enters the knowledge base, so an ask only reads them.

The detector (:mod:`veracity.pipeline.injection`) judges every chunk of a
source that is not official (and the whole body of an untrusted one, which
decides whether its other chunks are held back) as the document is stored;
the catalog keeps the signals under :func:`~veracity.pipeline.injection.verdict_key`
(:mod:`veracity.catalog.verdicts`, on SQLite and PostgreSQL: there each row names
the tenant whose text it judged). What judges is what decides in asks: the cue-word
detector, or the trained guard while one is in use (its verdicts filed under its own
version). Official text is never quarantined, so it is never judged. A store without
a verdict table (the in-memory one) keeps nothing: its asks judge as before.
``veracity reindex`` judges what a newer detector has not judged yet
(:func:`judge_missing`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..model.contracts import Chunk, Document, Trust
from ..pipeline.injection import judged_signals, verdict_key, verdict_keys

__all__ = [
    "forget_verdicts",
    "judge_missing",
    "judge_texts",
    "keeps_verdicts",
    "store_many_verdicts",
    "store_verdicts",
    "texts_to_judge",
]


def texts_to_judge(document: Document, chunks: Sequence[Chunk]) -> list[tuple[str, tuple[str, ...]]]:
    """``(text, heading_path)`` the answer step may ask a verdict on, for ``document``."""
    if document.trust is Trust.OFFICIAL:
        return []
    texts = [(chunk.text, tuple(chunk.heading_path)) for chunk in chunks]
    if document.trust is Trust.UNTRUSTED:
        texts.append((document.body, ()))
    return texts


def _keyed(document: Document, chunks: Sequence[Chunk]) -> list[tuple[str, tuple[str, tuple[str, ...]]]]:
    """``(verdict_key, (text, heading_path))`` of each text of ``document`` to judge."""
    return [(verdict_key(*text), text) for text in texts_to_judge(document, chunks)]


def keeps_verdicts(store: Any) -> bool:
    """Whether ``store`` keeps verdicts."""
    return callable(getattr(store, "store_signals", None))


def judge_texts(document: Document, chunks: Sequence[Chunk]) -> list[tuple[str, tuple[str, ...]]]:
    """``(key, signals)`` of ``document``'s texts, judged now by what decides (an ingest worker
    does this)."""
    return judged_signals(texts_to_judge(document, chunks))


def store_verdicts(
    store: Any,
    document: Document,
    chunks: Sequence[Chunk],
    judged: Sequence[tuple[str, tuple[str, ...]]] | None = None,
) -> int:
    """Keep ``document``'s verdicts in ``store``: ``judged`` by a worker, else judged now.

    How many texts were judged here (0 when a worker had judged them all).
    """
    return store_many_verdicts(store, [(document, chunks, judged)])


def store_many_verdicts(
    store: Any,
    documents: Sequence[tuple[Document, Sequence[Chunk], Sequence[tuple[str, tuple[str, ...]]] | None]],
) -> int:
    """:func:`store_verdicts` of each ``(document, chunks, judged)``, kept in one call to the store."""
    if not keeps_verdicts(store):
        return 0
    rows: list[tuple[str, str, tuple[str, ...]]] = []
    judged_here = 0
    for document, chunks, judged in documents:
        keyed = _keyed(document, chunks)
        wanted = {key for key, _ in keyed}
        ready = [row for row in judged or () if row[0] in wanted]  # of the texts it is stored with
        have = {key for key, _ in ready}
        missing = [text for key, text in keyed if key not in have]
        rows.extend((document.tenant, key, signals) for key, signals in [*ready, *judged_signals(missing)])
        judged_here += len(missing)
    store.store_signals(rows)
    return judged_here


def forget_verdicts(store: Any, document: Document, chunks: Sequence[Chunk]) -> None:
    """Delete ``document``'s verdicts (a delete leaves nothing derived from its text; a live
    document with the very same text is judged again when asked, and by ``veracity reindex``)."""
    if callable(getattr(store, "delete_signals", None)):
        keys = [key for text in texts_to_judge(document, chunks) for key in verdict_keys(*text)]
        store.delete_signals(document.tenant, keys)


def judge_missing(store: Any, documents: Iterable[tuple[Document, Sequence[Chunk]]]) -> int:
    """Judge and keep the texts of ``documents`` that have no verdict under this detector yet."""
    if not keeps_verdicts(store):
        return 0
    by_tenant: dict[str, list[tuple[str, tuple[str, tuple[str, ...]]]]] = {}
    for document, chunks in documents:
        by_tenant.setdefault(document.tenant, []).extend(_keyed(document, chunks))
    judged = 0
    for tenant, keyed in by_tenant.items():
        known = store.stored_verdict_keys(tenant, [key for key, _ in keyed])
        missing = [text for key, text in dict(keyed).items() if key not in known]  # each text once
        store.store_signals([(tenant, key, signals) for key, signals in judged_signals(missing)])
        judged += len(missing)
    return judged
