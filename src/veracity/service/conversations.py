"""The ``/v1/conversations`` routes: a conversation per key, follow-ups under every gate.

``POST /v1/conversations`` starts one (owned by the presented key), ``POST
/v1/conversations/{id}/ask`` asks its next turn (resolved against the turn before, then asked
like ``/v1/ask``), ``GET /v1/conversations/{id}`` reads it with each earlier citation checked
against the live catalog. Any other key gets 404. See :mod:`veracity.kb.conversations`.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from ..kb.conversations import Conversations
from .api import JSON, Who, make_router

__all__ = ["router"]

router = make_router()


def conversations(request: Request) -> Conversations:
    """The application's conversations (opened with its gateway)."""
    return request.app.state.conversations


Talks = Annotated[Conversations, Depends(conversations)]


class StartBody(BaseModel):
    """A new conversation. Who owns it comes from the key, never from here."""

    model_config = ConfigDict(extra="forbid")
    title: str | None = Field(None, description="A title to list it by (the first question when left out).")


class TurnBody(BaseModel):
    """The next question of a conversation."""

    model_config = ConfigDict(extra="forbid")
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


@router.get("/v1/conversations/{conversation_id}", tags=["conversations"])
def read(conversation_id: str, who: Who, talks: Talks) -> dict[str, Any]:
    """The conversation's turns; a citation the key could not cite now is marked withdrawn."""
    return talks.read(who, conversation_id)
