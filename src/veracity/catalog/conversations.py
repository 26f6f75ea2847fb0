"""Conversations of the HTTP service: who owns each one, its turns as they were answered, feedback.

A conversation belongs to one API key (and so to one tenant and one set of roles); its turns
keep the question as written, the question as resolved against the turn before
(:mod:`veracity.text.followup`), the version and moment asked about, and the answer as it was
served (JSON). A stored answer is history, never evidence: a later turn is asked afresh
through every gate, and reading a conversation checks its citations against the live catalog.
Feedback (👍/👎 and a comment) rates one turn, with the principal and the catalog state it was
given in; it never changes an answer.

Where the rows live follows :mod:`veracity.catalog.serving`: a directory keeps them in a side
file, ``DIR/conversations.sqlite`` (durable, unlike the serving cache: deleting it loses the
history), a PostgreSQL knowledge base in its own database (migration ``pg0012_conversations``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import apsw

from .connection import BUSY_TIMEOUT_MS
from .schema import CONVERSATION_TABLES
from .serving import InDatabase, SideFile

__all__ = [
    "CONVERSATIONS_FILE",
    "CONVERSATION_TABLES",
    "ConversationRow",
    "ConversationTables",
    "FeedbackRow",
    "TurnRow",
    "conversations_in_database",
    "open_conversations_file",
]

CONVERSATIONS_FILE: Final = "conversations.sqlite"


@dataclass(frozen=True, slots=True)
class ConversationRow:
    """A conversation's owner and title."""

    conversation_id: str
    tenant: str
    key_id: str
    title: str
    created_at: str


@dataclass(frozen=True, slots=True)
class TurnRow:
    """One turn as stored (``carried`` and ``body`` decoded)."""

    turn: int
    question: str
    resolved: str
    version: str | None
    as_of: str
    carried: dict[str, Any]
    body: dict[str, Any]
    asked_at: str


@dataclass(frozen=True, slots=True)
class FeedbackRow:
    """👍 or 👎 (``up``/``down``) on one turn, by the key that owns the conversation."""

    conversation_id: str
    turn: int
    tenant: str
    key_id: str
    roles: tuple[str, ...]
    rating: str
    comment: str
    catalog_state: dict[str, Any]
    rated_at: str


class ConversationTables:
    """The two tables at a place (a side file or a database); thread-safe."""

    def __init__(self, place: Any) -> None:
        self.place = place

    def create(self, row: ConversationRow) -> None:
        """Store a new conversation."""
        with self.place.write() as connection:
            connection.execute(
                "INSERT INTO conversations (id, tenant, key_id, title, created_at) VALUES (?, ?, ?, ?, ?)",
                (row.conversation_id, row.tenant, row.key_id, row.title, row.created_at),
            )

    def conversation(self, conversation_id: str) -> ConversationRow | None:
        """The conversation, or ``None``."""
        with self.place.write() as connection:  # the owner's connection: no row-level scoping here
            found = connection.execute(
                "SELECT id, tenant, key_id, title, created_at FROM conversations WHERE id = ?",
                (conversation_id,),
            ).fetchone()
        return None if found is None else ConversationRow(*(str(value) for value in found))

    def turns(self, conversation_id: str) -> list[TurnRow]:
        """Every turn, in order."""
        with self.place.write() as connection:
            rows = connection.execute(
                "SELECT turn, question, resolved, version, as_of, carried, body, asked_at "
                "FROM conversation_turns WHERE conversation_id = ? ORDER BY turn",
                (conversation_id,),
            ).fetchall()
        return [TurnRow(int(t), str(q), str(r), v, str(a), json.loads(c), json.loads(b), str(at))
                for t, q, r, v, a, c, b, at in rows]  # fmt: skip

    def add_turn(self, conversation_id: str, values: Sequence[Any]) -> int:
        """Append a turn ``(question, resolved, version, as_of, carried, body, asked_at)``; its number.

        The number is taken in the writing transaction, so two turns sent at once get two numbers.
        """
        question, resolved, version, as_of, carried, body, asked_at = values
        with self.place.write() as connection:
            last = connection.execute(
                "SELECT COALESCE(MAX(turn), 0) FROM conversation_turns WHERE conversation_id = ?",
                (conversation_id,),
            ).fetchone()[0]
            turn = int(last) + 1
            connection.execute(
                "INSERT INTO conversation_turns "
                "(conversation_id, turn, question, resolved, version, as_of, carried, body, asked_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (conversation_id, turn, question, resolved, version, as_of,
                 json.dumps(carried, ensure_ascii=False, sort_keys=True),
                 json.dumps(body, ensure_ascii=False, sort_keys=True), asked_at),
            )  # fmt: skip
        return turn

    def rate(self, row: FeedbackRow) -> None:
        """Store (or replace) the feedback on one turn."""
        with self.place.write() as connection:
            connection.execute(
                "INSERT INTO conversation_feedback (conversation_id, turn, tenant, key_id, roles, rating, "
                "comment, catalog_state, rated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (conversation_id, turn) DO UPDATE SET rating = excluded.rating, "
                "comment = excluded.comment, catalog_state = excluded.catalog_state, "
                "rated_at = excluded.rated_at",
                (row.conversation_id, row.turn, row.tenant, row.key_id, json.dumps(list(row.roles)),
                 row.rating, row.comment, json.dumps(row.catalog_state, sort_keys=True), row.rated_at),
            )  # fmt: skip

    def feedback(
        self, *, tenant: str | None = None, rating: str | None = None
    ) -> list[tuple[FeedbackRow, TurnRow]]:
        """Feedback with the turn it rates, newest first (ties by conversation and turn)."""
        where, params = [], []
        for column, value in (("f.tenant", tenant), ("f.rating", rating)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        with self.place.write() as connection:
            rows = connection.execute(
                "SELECT f.conversation_id, f.turn, f.tenant, f.key_id, f.roles, f.rating, f.comment, "
                "f.catalog_state, f.rated_at, t.question, t.resolved, t.version, t.as_of, t.carried, t.body, "
                "t.asked_at FROM conversation_feedback f JOIN conversation_turns t "
                "ON t.conversation_id = f.conversation_id AND t.turn = f.turn"
                + (" WHERE " + " AND ".join(where) if where else "")
                + " ORDER BY f.rated_at DESC, f.conversation_id, f.turn",
                tuple(params),
            ).fetchall()
        return [
            (
                FeedbackRow(str(c), int(n), str(te), str(k), tuple(json.loads(ro)), str(ra), str(co),
                            json.loads(st), str(at)),
                TurnRow(int(n), str(q), str(r), v, str(a), json.loads(ca), json.loads(b), str(asked)),
            )
            for c, n, te, k, ro, ra, co, st, at, q, r, v, a, ca, b, asked in rows
        ]  # fmt: skip

    def close(self) -> None:
        """Close the side file (a database's store is its owner's to close)."""
        self.place.close()


def open_conversations_file(directory: Path) -> ConversationTables:
    """The side file of the knowledge base in ``directory`` (created when missing; durable)."""
    connection = apsw.Connection(str(directory / CONVERSATIONS_FILE))
    try:
        connection.set_busy_timeout(BUSY_TIMEOUT_MS)
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute(CONVERSATION_TABLES)
    except BaseException:
        connection.close()
        raise
    return ConversationTables(SideFile(connection))


def conversations_in_database(store: Any) -> ConversationTables:
    """The tables in a PostgreSQL store's database (its migrations made them)."""
    return ConversationTables(InDatabase(store))
