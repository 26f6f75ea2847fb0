"""The ``/v1/conversations`` routes: a conversation per key, follow-ups under every gate.

``POST /v1/conversations`` starts one (owned by the presented key), ``POST
/v1/conversations/{id}/ask`` asks its next turn (resolved against the turn before, then asked
like ``/v1/ask``), ``GET /v1/conversations/{id}`` reads it with each earlier citation checked
against the live catalog. Any other key gets 404. See :mod:`veracity.service.core.conversations`.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import StreamingResponse
from pydantic import Field

from .api import JSON, RequestBody, Who, make_router, sse
from .core.conversations import Conversations

__all__ = ["router"]

router = make_router()


def conversations(request: Request) -> Conversations:
    """The application's conversations (opened with its gateway)."""
    return request.app.state.conversations


Talks = Annotated[Conversations, Depends(conversations)]


class StartBody(RequestBody):
    """A new conversation. Who owns it comes from the key, never from here."""

    title: str | None = Field(None, description="A title to list it by (the first question when left out).")


class TurnBody(RequestBody):
    """The next question of a conversation."""

    question: str = Field(description="As the person wrote it; a follow-up may lean on the turn before.")
    version: str | None = Field(None, description="Product version it is about [default: the turn before's].")
    as_of: str | None = Field(None, description="'now', a date (end of that day, UTC) or an ISO datetime.")


@router.post("/v1/conversations", tags=["conversations"], dependencies=JSON)
def start(who: Who, talks: Talks, body: StartBody | None = None) -> dict[str, Any]:
    """Start a conversation owned by this key."""
    return talks.start(who, body.title if body else None)


@router.post("/v1/conversations/{conversation_id}/ask", tags=["conversations"], dependencies=JSON)
def ask(conversation_id: str, body: TurnBody, who: Who, talks: Talks) -> dict[str, Any]:
    """The next turn: the question resolved against the turn before (shown as ``resolved_question``
    with what was ``carried``), then answered through every gate."""
    return talks.ask(who, conversation_id, body.question, version=body.version, as_of=body.as_of)


class FeedbackBody(RequestBody):
    """👍 or 👎 on one turn, and why."""

    rating: str = Field(description="'up' or 'down'.")
    comment: str | None = Field(None, description="What was wrong (or right), at most 2,000 characters.")


@router.post("/v1/conversations/{conversation_id}/turns/{turn}/feedback", tags=["conversations"],
             dependencies=JSON)  # fmt: skip
def rate(conversation_id: str, turn: int, body: FeedbackBody, who: Who, talks: Talks) -> dict[str, Any]:
    """Rate one turn of this key's conversation (it never changes an answer)."""
    return talks.rate(who, conversation_id, turn, body.rating, body.comment)


@router.get("/v1/feedback", tags=["operator"])
def feedback(who: Who, talks: Talks, rating: str | None = None) -> dict[str, Any]:
    """Operator: the tenant's rated turns with their questions and citations, newest first
    (``rating``: ``up``, ``down``, or ``all``, as ``veracity feedback list`` takes it)."""
    return {"feedback": talks.feedback(who, None if rating == "all" else rating)}


@router.get("/v1/conversations/{conversation_id}/ask/stream", tags=["conversations"])
def ask_stream(
    conversation_id: str, who: Who, talks: Talks, question: str, version: str | None = None,
    as_of: str | None = None,
) -> StreamingResponse:  # fmt: skip
    """The next turn as server-sent events: ``resolved``, then each written claim as soon as it
    is verified (``citation`` events before the claim that first uses them), ``status``,
    ``reset`` when what was streamed must be forgotten, ``turn`` once stored, ``done``."""
    events = talks.ask_events(who, conversation_id, question, version=version, as_of=as_of)
    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(sse(events), media_type="text/event-stream", headers=headers)


@router.get("/v1/conversations/{conversation_id}", tags=["conversations"])
def read(conversation_id: str, who: Who, talks: Talks) -> dict[str, Any]:
    """The conversation's turns; a citation the key could not cite now is marked withdrawn."""
    return talks.read(who, conversation_id)
