"""The injection detector's verdicts kept in a SQL catalog: one implementation for SQLite and PostgreSQL.

Ingest judges every text a non-official source may put in front of the model
(:mod:`veracity.ingest.verdicts`) and the catalog keeps its signals under
:func:`~veracity.pipeline.injection.verdict_key` (a digest of the detector, the
headings and the text, never the text), so an ask reads them
(:func:`~veracity.pipeline.injection.stored_verdicts`) instead of judging again.
A verdict is a function of its key alone: whichever row a key is read from, the
signals are the same.

On PostgreSQL each row also names the tenant of the document whose text it judged
(``pg0009_injection_verdicts``): the table has row-level security like every
tenant-scoped table, so an ask reading as the reader role sees its tenant's
verdicts only, and a delete forgets its tenant's alone. SQLite's table
(``0016_injection_verdicts``) has no tenant column: a key kept once serves every
tenant, and a delete forgets the key for all (a live document with the very same
text is judged again when asked, and by ``veracity reindex``). The statements are
the same on both but for that column (and how a list is bound: :func:`~.sql.in_values`).

A store keeps the verdicts it has read (:data:`KEPT_VERDICTS` of them at most, by key,
whichever tenant they were read for: the key fixes the verdict), so an ask that meets
texts an earlier one met reads nothing from the database for them, as the detector's
own cache would have judged nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Final, Protocol

from .sql import dialect_of, in_values

__all__ = ["KEPT_VERDICTS", "VerdictQueries"]

KEPT_VERDICTS: Final = 65_536
"""How many verdicts read from its catalog a store keeps (then it starts again from none)."""


class _SqlStore(Protocol):
    """What :class:`VerdictQueries` needs of the store it is mixed into."""

    @property
    def connection(self) -> Any: ...

    def read(self) -> AbstractContextManager[None]: ...

    def transaction(self) -> AbstractContextManager[None]: ...


def _names_tenant(connection: Any) -> bool:
    """Whether verdict rows name their tenant: PostgreSQL's do (row-level security), SQLite's not."""
    return dialect_of(connection) == "postgresql"


def _of_tenant(connection: Any, tenant: str) -> tuple[str, tuple[str, ...]]:
    """``(condition, parameters)`` choosing ``tenant``'s rows (nothing where rows name no tenant)."""
    return ("tenant = ? AND ", (tenant,)) if _names_tenant(connection) else ("", ())


class VerdictQueries:
    """Mixin for a SQL store: its injection verdicts (see the module docstring)."""

    def stored_signals(self: _SqlStore, key: str) -> tuple[str, ...] | None:
        """The signals stored under ``key`` (read once by this store), or ``None``."""
        kept: dict[str, tuple[str, ...]] = self.__dict__.setdefault("_kept_verdicts", {})
        found = kept.get(key)
        if found is not None:
            return found
        with self.read():
            sql = "SELECT signals FROM injection_verdicts WHERE key = ?"
            row = self.connection.execute(sql, (key,)).fetchone()
        if row is None:
            return None
        if len(kept) >= KEPT_VERDICTS:
            kept.clear()
        found = kept[key] = tuple(json.loads(row[0]))
        return found

    def store_signals(self: _SqlStore, verdicts: Sequence[tuple[str, str, tuple[str, ...]]]) -> None:
        """Keep each ``(tenant, key, signals)`` (a key already kept keeps its verdict: the key fixes it)."""
        if not verdicts:
            return
        connection = self.connection
        rows: list[tuple[str, ...]]
        if _names_tenant(connection):
            sql = "INSERT INTO injection_verdicts (tenant, key, signals) VALUES (?, ?, ?)"
            rows = [(tenant, key, json.dumps(list(signals))) for tenant, key, signals in verdicts]
        else:
            sql = "INSERT INTO injection_verdicts (key, signals) VALUES (?, ?)"
            rows = [(key, json.dumps(list(signals))) for _, key, signals in verdicts]
        with self.transaction():
            connection.executemany(f"{sql} ON CONFLICT DO NOTHING", rows)

    def delete_signals(self: _SqlStore, tenant: str, keys: Sequence[str]) -> None:
        """Forget ``tenant``'s verdicts under ``keys`` (a deleted document's: digests of its text)."""
        if not keys:
            return
        connection = self.connection
        scope, params = _of_tenant(connection, tenant)
        condition, values = in_values(connection, "key", keys)
        with self.transaction():
            connection.execute(f"DELETE FROM injection_verdicts WHERE {scope}{condition}", (*params, values))
        kept = self.__dict__.get("_kept_verdicts", {})
        for key in keys:  # nothing of the text stays here either
            kept.pop(key, None)

    def stored_verdict_keys(self: _SqlStore, tenant: str, keys: Sequence[str]) -> set[str]:
        """Which of ``keys`` have a verdict kept for ``tenant``."""
        if not keys:
            return set()
        connection = self.connection
        scope, params = _of_tenant(connection, tenant)
        condition, values = in_values(connection, "key", keys)
        with self.read():
            rows = connection.execute(
                f"SELECT key FROM injection_verdicts WHERE {scope}{condition}", (*params, values)
            )
            return {str(row[0]) for row in rows}
