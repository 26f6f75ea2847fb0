"""Conversations over a :class:`~veracity.service.core.gateway.Gateway`: follow-ups under the same governance.

A conversation belongs to the API key that started it: any other key, of the same tenant or
not, is told it does not exist (404). A follow-up is resolved against the turn before it
(:func:`veracity.text.followup.resolve_followup`: the subject and version carried over), then
asked like any question through every gate; earlier answers are never evidence, only chunks
are. The turn keeps the question as written, as asked, what was carried, and the answer as it
was served to the key (an asker's view: no trace, no explanation).

Reading a conversation checks every citation of every turn against the live catalog for the
key as it is now: a cited document that was withdrawn, retired or deleted, or that the key may
no longer see, marks the citation and each claim resting on it ``withdrawn``, and the text of
those claims is left out (a key that lost a role must not read through history what it can no
longer ask for).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...catalog.catalog import Resolution
from ...catalog.conversations import (
    ConversationRow,
    ConversationTables,
    FeedbackRow,
    conversations_in_database,
    open_conversations_file,
)
from ...kb.local import Moment
from ...model.contracts import ExclusionReason, Status
from ...model.errors import NotFoundError
from ...text.followup import Resolved, resolve_followup
from ...text.questions import check_question
from .cache import catalog_state
from .feedback import check_rating, items
from .gateway import Caller, Gateway, check_ask
from .served import ServedAnswer

__all__ = ["Conversations"]

_TITLE_CHARS = 120
_PRIVATE = ("trace", "explain")


def _reason(resolution: Resolution) -> str:
    """Why an earlier citation could not be cited now, in words."""
    if resolution.status is None:
        return "deleted"
    if resolution.status is not Status.ACTIVE:
        return str(resolution.status.value)
    if resolution.primary_reason in (ExclusionReason.TENANT, ExclusionReason.ROLE):
        return "no longer permitted"
    return "no longer valid"


class Conversations:
    """Start, continue and read conversations of one gateway's knowledge base; thread-safe."""

    def __init__(self, gate: Gateway, tables: ConversationTables | None = None) -> None:
        """Conversations kept beside ``gate``'s knowledge base (or in ``tables``)."""
        self.gate = gate
        if tables is None:
            path = gate.kb.path
            tables = (
                conversations_in_database(gate.side)
                if isinstance(path, str)
                else open_conversations_file(Path(str(path)))
            )
        self.tables = tables

    def close(self) -> None:
        """Close the conversations' side file."""
        self.tables.close()

    def start(self, caller: Caller, title: str | None = None) -> dict[str, Any]:
        """A new, empty conversation owned by ``caller``'s key."""
        text = " ".join((title or "").split())[:_TITLE_CHARS]
        row = ConversationRow(
            conversation_id="c_" + secrets.token_hex(12), tenant=caller.principal.tenant,
            key_id=caller.key.key_id, title=text, created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )  # fmt: skip
        self.tables.create(row)
        return {"id": row.conversation_id, "title": row.title, "created_at": row.created_at, "turns": []}

    def _owned(self, caller: Caller, conversation_id: str) -> ConversationRow:
        row = self.tables.conversation(conversation_id) if conversation_id.startswith("c_") else None
        if row is None or row.key_id != caller.key.key_id or row.tenant != caller.principal.tenant:
            raise NotFoundError(f"no conversation {conversation_id!r} for this key")
        return row

    def _next(
        self, caller: Caller, conversation_id: str, question: str, version: str | None
    ) -> tuple[ConversationRow, Resolved]:
        """The conversation (the key's own) and ``question`` resolved against its last turn."""
        check_question(question)
        row = self._owned(caller, conversation_id)
        turns = self.tables.turns(row.conversation_id)
        last = turns[-1] if turns else None
        return row, resolve_followup(
            question, last.resolved if last else None, last.version if last else None, version
        )

    def _store(
        self, row: ConversationRow, question: str, resolved: Resolved, as_of: Moment, served: ServedAnswer
    ) -> tuple[int, dict[str, Any]]:
        """Keep the turn (the asker's view of its answer); its number and that view."""
        body = {k: v for k, v in served.as_dict().items() if k not in _PRIVATE}
        asked_as = str(as_of) if as_of is not None else "now"
        values = (question.strip(), resolved.question, resolved.version, asked_as, resolved.carried, body,
                  datetime.now(UTC).isoformat(timespec="seconds"))  # fmt: skip
        return self.tables.add_turn(row.conversation_id, values), body

    def ask(
        self, caller: Caller, conversation_id: str, question: str, *, version: str | None = None,
        as_of: Moment = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Ask ``question`` as the next turn: resolved against the turn before, then asked afresh."""
        row, resolved = self._next(caller, conversation_id, question, version)
        served = self.gate.ask(caller, resolved.question, version=resolved.version, as_of=as_of)
        turn, body = self._store(row, question, resolved, as_of, served)
        return {
            **body, "conversation_id": row.conversation_id, "turn": turn, "asked": question.strip(),
            "resolved_question": resolved.question, "version": resolved.version, "carried": resolved.carried,
        }  # fmt: skip

    def ask_events(
        self, caller: Caller, conversation_id: str, question: str, *, version: str | None = None,
        as_of: Moment = None,
    ) -> Iterator[tuple[str, dict[str, Any]]]:  # fmt: skip
        """:meth:`ask` as server-sent events: ``resolved`` first (the question as it is asked, what
        was carried), the answer's events with each written claim as soon as it is verified, then
        ``turn`` (its number) once the turn is stored."""
        row, resolved = self._next(caller, conversation_id, question, version)  # now: a 404 is a 404
        check_ask(resolved.question, resolved.version, as_of)  # and bad input a 4xx, before the stream
        return self._events(caller, row, question, resolved, as_of)

    def _events(
        self, caller: Caller, row: ConversationRow, question: str, resolved: Resolved, as_of: Moment
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        yield "resolved", {
            "asked": question.strip(), "resolved_question": resolved.question, "version": resolved.version,
            "carried": resolved.carried,
        }  # fmt: skip
        answered: list[ServedAnswer] = []
        for name, data in self.gate.ask_events(
            caller, resolved.question, version=resolved.version, as_of=as_of, on_answer=answered.append
        ):
            if name == "done" and answered:
                turn, _ = self._store(row, question, resolved, as_of, answered[0])
                yield "turn", {"conversation_id": row.conversation_id, "turn": turn}
            yield name, data

    def rate(self, caller: Caller, conversation_id: str, turn: int, rating: str, comment: str | None = None
             ) -> dict[str, Any]:  # fmt: skip
        """👍 (``up``) or 👎 (``down``) with an optional comment on one turn of the key's conversation;
        a second rating of the same turn replaces the first. It never changes an answer."""
        row = self._owned(caller, conversation_id)
        rating, text = check_rating(rating, comment)
        if turn not in {t.turn for t in self.tables.turns(row.conversation_id)}:
            raise NotFoundError(f"conversation {conversation_id!r} has no turn {turn}")
        state = catalog_state(self.gate.side)
        feedback = FeedbackRow(
            row.conversation_id, turn, row.tenant, row.key_id, tuple(sorted(caller.principal.roles)),
            rating, text,
            {"index_generation": state.index_generation, "catalog_revision": state.catalog_revision},
            datetime.now(UTC).isoformat(timespec="seconds"),
        )  # fmt: skip
        self.tables.rate(feedback)
        return {"conversation_id": row.conversation_id, "turn": turn, "rating": rating, "comment": text}

    def feedback(self, caller: Caller, rating: str | None = None) -> list[dict[str, Any]]:
        """Operator: the feedback of the key's tenant (``rating``: only ``up`` or ``down``), newest first."""
        self.gate.require_operator(caller)
        if rating is not None:
            check_rating(rating, None)
        return items(self.tables.feedback(tenant=caller.principal.tenant, rating=rating))

    def _revised(self, caller: Caller, source_id: str, document_id: str, version: str | None) -> bool:
        """Whether a newer revision of ``source_id`` than ``document_id`` is active and citable for
        ``caller``: the cited revision was replaced, not retired by hand (a newer one that the caller
        may not see is not named)."""
        revisions = [
            d.document_id
            for d in self.gate.kb.engine.catalog.documents(caller.principal.tenant)
            if d.source_id == source_id
        ]
        newer = revisions[revisions.index(document_id) + 1 :] if document_id in revisions else []
        if not newer:
            return False
        gone = {r.document_id for r in self.gate.uncitable(caller, newer, version)}
        return any(candidate not in gone for candidate in newer)

    def read(self, caller: Caller, conversation_id: str) -> dict[str, Any]:
        """The conversation with each turn's citations checked against the live catalog now."""
        row = self._owned(caller, conversation_id)
        shown = []
        for turn in self.tables.turns(row.conversation_id):
            body = dict(turn.body)
            citations = [dict(c) for c in body.get("citations", [])]
            gone = {
                r.document_id: _reason(r)
                for r in self.gate.uncitable(caller, [c["document_id"] for c in citations], turn.version)
            }
            for citation in citations:
                if gone.get(citation["document_id"]) == Status.RETIRED.value and self._revised(
                    caller, citation["source_id"], citation["document_id"], turn.version
                ):
                    gone[citation["document_id"]] = "revised"
            withdrawn_ids = set()
            for citation in citations:
                if citation["document_id"] in gone:
                    withdrawn_ids.add(citation["id"])
                    citation.update(withdrawn=True, withdrawn_reason=gone[citation["document_id"]], title="",
                                    path="", url=None)  # fmt: skip
            claims = []
            for claim in body.get("claims", []):
                claim = dict(claim)
                if set(claim.get("citations", [])) & withdrawn_ids:
                    claim.update(withdrawn=True, text=None)
                claims.append(claim)
            shown.append({
                "turn": turn.turn, "asked": turn.question, "resolved_question": turn.resolved,
                "version": turn.version, "as_of": turn.as_of, "carried": turn.carried,
                "asked_at": turn.asked_at,
                "status": body.get("status"), "claims": claims, "citations": citations,
                "uncovered": body.get("uncovered_subquestions", []), "reasons": body.get("reasons", []),
                "withdrawn_citations": sorted(withdrawn_ids),
            })  # fmt: skip
        return {"id": row.conversation_id, "title": row.title, "created_at": row.created_at, "turns": shown}
