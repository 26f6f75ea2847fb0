"""The ``api_keys`` table: the stored half of each API key (never its secret).

A row holds the key's public id and name, the tenant and roles it asks with,
whether it is an operator's, a per-key random salt and ``sha256(salt ‖ secret)``,
and when it was created and revoked. Making, checking and revoking keys is
:mod:`veracity.kb.keys`; this module only reads and writes the rows, with SQL
that runs as written on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..model.contracts import Principal

__all__ = ["ApiKey", "insert_key", "key_with_digest", "set_revoked", "stored_keys"]

_COLUMNS: Final = "key_id, name, tenant, roles, operator, created_at, revoked_at"


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A stored key, without its secret."""

    key_id: str
    name: str
    tenant: str
    roles: tuple[str, ...]
    operator: bool
    created_at: str
    revoked_at: str | None = None

    @property
    def principal(self) -> Principal:
        """The asker this key stands for (its user id is the key id, for audit)."""
        return Principal(tenant=self.tenant, roles=frozenset(self.roles), user_id=self.key_id)

    def as_dict(self) -> dict[str, Any]:
        """Plain data (never the secret, which is not stored)."""
        return {
            "key_id": self.key_id,
            "name": self.name,
            "tenant": self.tenant,
            "roles": list(self.roles),
            "operator": self.operator,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }


def _key(row: Sequence[Any]) -> ApiKey:
    key_id, name, tenant, roles, operator, created_at, revoked_at = row
    return ApiKey(
        key_id=str(key_id),
        name=str(name),
        tenant=str(tenant),
        roles=tuple(json.loads(roles)),
        operator=bool(operator),
        created_at=str(created_at),
        revoked_at=str(revoked_at) if revoked_at is not None else None,
    )


def insert_key(connection: Any, key: ApiKey, salt: str, digest: str) -> None:
    """Store ``key`` with the salt and digest of its secret (call inside a transaction)."""
    connection.execute(
        f"INSERT INTO api_keys ({_COLUMNS}, salt, digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (key.key_id, key.name, key.tenant, json.dumps(list(key.roles)), int(key.operator), key.created_at,
         key.revoked_at, salt, digest),
    )  # fmt: skip


def stored_keys(connection: Any, tenant: str | None = None) -> list[ApiKey]:
    """Every stored key (of ``tenant``), revoked ones included, by tenant, name and id."""
    sql = f"SELECT {_COLUMNS} FROM api_keys"
    params: tuple[str, ...] = ()
    if tenant is not None:
        sql, params = sql + " WHERE tenant = ?", (tenant,)
    rows = connection.execute(sql + " ORDER BY tenant, name, key_id", params).fetchall()
    return [_key(row) for row in rows]


def set_revoked(connection: Any, key_id: str, moment: str) -> None:
    """Record that the key ``key_id`` was revoked at ``moment``."""
    connection.execute("UPDATE api_keys SET revoked_at = ? WHERE key_id = ?", (moment, key_id))


def key_with_digest(connection: Any, key_id: str) -> tuple[ApiKey, str, str] | None:
    """The key ``key_id`` with its salt and digest, or ``None`` when there is no such key."""
    row = connection.execute(
        f"SELECT {_COLUMNS}, salt, digest FROM api_keys WHERE key_id = ?", (key_id,)
    ).fetchone()
    return None if row is None else (_key(row[:7]), str(row[7]), str(row[8]))
