"""Feedback on answers: 👍/👎 and a comment on one conversation turn, and the operator's views.

Feedback is stored beside the conversations (:mod:`veracity.catalog.conversations`) with the
principal the answer was given to and the catalog state it was given in. It never changes an
answer: it is read by operators (``veracity feedback list``, ``GET /v1/feedback``) and turned
into evaluation cases (``veracity feedback export``: one case a line, in the format of
:mod:`veracity.evaluate.cases`, with the expected status left for a person to fill in).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from ...catalog.conversations import FeedbackRow, TurnRow
from ...model.errors import ValidationError

__all__ = [
    "MAX_COMMENT",
    "RATINGS",
    "check_rating",
    "feedback_case",
    "feedback_item",
    "items",
    "read_feedback",
]

RATINGS: Final = ("up", "down")
MAX_COMMENT: Final = 2000
"""Longest feedback comment accepted, in characters (a longer one is refused, not cut)."""


def check_rating(rating: str, comment: str | None) -> tuple[str, str]:
    """The rating and comment as stored; ``ValidationError`` naming the field otherwise."""
    if rating not in RATINGS:
        raise ValidationError(f"rating must be one of {', '.join(RATINGS)}, got {rating!r}", field="rating")
    text = (comment or "").strip()
    if len(text) > MAX_COMMENT:
        raise ValidationError(
            f"the comment is {len(text)} characters; at most {MAX_COMMENT}", field="comment"
        )
    return rating, text


def feedback_item(feedback: FeedbackRow, turn: TurnRow) -> dict[str, Any]:
    """One rated turn for an operator: the question as asked, what was answered and cited, the rating."""
    body = turn.body
    return {
        "conversation_id": feedback.conversation_id, "turn": feedback.turn, "rating": feedback.rating,
        "comment": feedback.comment, "rated_at": feedback.rated_at, "tenant": feedback.tenant,
        "roles": list(feedback.roles), "key_id": feedback.key_id, "catalog_state": feedback.catalog_state,
        "asked": turn.question, "question": turn.resolved, "version": turn.version, "asked_at": turn.asked_at,
        "status": body.get("status"), "claims": [c.get("text") for c in body.get("claims", [])],
        "cited": [
            {"source_id": c.get("source_id"), "revision": c.get("revision"), "chunk_id": c.get("chunk_id")}
            for c in body.get("citations", [])
        ],
    }  # fmt: skip


def feedback_case(feedback: FeedbackRow, turn: TurnRow) -> dict[str, Any]:
    """An evaluation case to finish by hand: the question as it was asked, by whom, when; the
    expected status and the relevant documents are left empty, the comment is the expectation."""
    return {
        "id": f"feedback-{feedback.conversation_id}-{feedback.turn}",
        "group": "feedback",
        "question": turn.resolved,
        "actor": {"tenant": feedback.tenant, "role": feedback.roles[0] if feedback.roles else None},
        "target_version": turn.version,
        "as_of": turn.asked_at,
        "required_fact_ids": [],
        "relevant_document_ids": [],
        "expected_status": None,
        "mode": "conformance",
        "expectation": feedback.comment,
        "feedback": {
            "rating": feedback.rating,
            "answered": turn.body.get("status"),
            "cited": sorted({str(c.get("source_id")) for c in turn.body.get("citations", [])}),
        },
    }


def items(rows: Iterable[tuple[FeedbackRow, TurnRow]]) -> list[dict[str, Any]]:
    """:func:`feedback_item` of each row."""
    return [feedback_item(feedback, turn) for feedback, turn in rows]


def read_feedback(location: Any, *, rating: str | None = None, tenant: str | None = None) -> list[
    tuple[FeedbackRow, TurnRow]
]:  # fmt: skip
    """The feedback stored for the knowledge base at ``location`` (a directory or a URL), newest
    first; a directory whose service never kept a conversation has none (nothing is created)."""
    from pathlib import Path

    from ...catalog.conversations import (
        CONVERSATIONS_FILE,
        conversations_in_database,
        open_conversations_file,
    )
    from ...kb.backends import open_store

    if rating is not None:
        check_rating(rating, None)
    if isinstance(location, str):
        store = open_store(location)
        try:
            return conversations_in_database(store).feedback(tenant=tenant, rating=rating)
        finally:
            store.close()
    if not (Path(location) / CONVERSATIONS_FILE).is_file():
        return []
    tables = open_conversations_file(Path(location))
    try:
        return tables.feedback(tenant=tenant, rating=rating)
    finally:
        tables.close()
