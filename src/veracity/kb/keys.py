"""API keys: who a service request comes from, decided by the key alone.

A key reads ``vk_<key_id>_<secret>``. The ``key_id`` (12 hex digits) is its
public name in listings and logs; the ``secret`` (43 URL-safe characters,
256 random bits) is shown once, when the key is created, and the knowledge
base keeps only a per-key random salt and ``sha256(salt ‖ secret)``
(table ``api_keys``, migration ``0013_api_keys``). A slow password hash
(scrypt, argon2) would add tens of milliseconds to every request and buys
nothing here: the secret is random, not a password a person chose, so
guessing it is hopeless either way.

Each key carries a tenant, the roles it asks with, and whether it is an
operator's. :func:`authenticate` turns a presented key into that record or
raises :class:`~veracity.model.errors.AuthenticationError` (unknown, revoked
or malformed: the same message for each, so a caller learns nothing about
which). The roles are checked against the tenant's when the key is created;
a tenant that stops defining a role makes the key see less, never more (the
catalog fails closed on unknown roles).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from ..catalog.keys import ApiKey, insert_key, key_with_digest, set_revoked, stored_keys
from ..catalog.store import DatabaseStore
from ..model.errors import AuthenticationError, NotFoundError, ValidationError
from .local import LocalKnowledgeBase

__all__ = ["ApiKey", "NewKey", "authenticate", "create_key", "list_keys", "revoke_key"]

KEY_PREFIX: Final = "vk_"
_KEY = re.compile(r"vk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})")
_DENIED: Final = (
    "the API key is missing, unknown or revoked; ask an operator for one ('veracity keys create')"
)


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key just created: the record and the full key, which is shown this once."""

    key: ApiKey
    secret: str


def _store(kb: LocalKnowledgeBase | DatabaseStore) -> DatabaseStore:
    """The catalog store holding the keys: a knowledge base's, or a store opened on its file."""
    if isinstance(kb, DatabaseStore):
        return kb
    store = kb.engine.catalog.store
    if kb.path is None or not isinstance(store, DatabaseStore):
        raise ValidationError("API keys live in an on-disk knowledge base; open a directory")
    return store


def _digest(salt: str, secret: str) -> str:
    return hashlib.sha256(bytes.fromhex(salt) + secret.encode("ascii")).hexdigest()


def create_key(
    kb: LocalKnowledgeBase,
    *,
    tenant: str,
    roles: Sequence[str],
    operator: bool = False,
    name: str | None = None,
) -> NewKey:
    """Create a key for ``tenant`` asking with ``roles``; the tenant and roles must exist.

    Raises ``IdentityError`` (naming what the knowledge base defines) for an
    unknown tenant or role, ``ValidationError`` for an empty role list.
    """
    if not roles:
        raise ValidationError("a key needs at least one role (e.g. --roles public)", field="roles")
    principal = kb.principal(tenant, roles)  # checks the tenant and every role
    wanted = (name or "").strip()
    if wanted and any(k.name == wanted and k.revoked_at is None for k in list_keys(kb)):
        raise ValidationError(
            f"a key named {wanted!r} exists; choose another name (revoke and rotate by name need one key "
            "per name)",
            field="name",
        )
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_hex(16)
    record = ApiKey(
        key_id=key_id,
        name=wanted or f"key-{key_id}",
        tenant=principal.tenant,
        roles=tuple(sorted(principal.roles)),
        operator=operator,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    store = _store(kb)
    with store.transaction():
        insert_key(store.connection, record, salt, _digest(salt, secret))
    return NewKey(record, f"{KEY_PREFIX}{key_id}_{secret}")


def list_keys(kb: LocalKnowledgeBase, tenant: str | None = None) -> list[ApiKey]:
    """Every key (of ``tenant``), revoked ones included, by tenant and name."""
    store = _store(kb)
    with store.read():
        return stored_keys(store.connection, tenant)


def revoke_key(kb: LocalKnowledgeBase, key_id_or_name: str) -> ApiKey:
    """Revoke a key by id or by its (unique) name; revoking twice keeps the first moment."""
    wanted = key_id_or_name.strip()
    if wanted.startswith(KEY_PREFIX):  # a whole key pasted: its id is the public part
        match = _KEY.fullmatch(wanted)
        wanted = match.group(1) if match else wanted
    matches = [k for k in list_keys(kb) if wanted in (k.key_id, k.name)]
    if not matches:
        raise NotFoundError(f"no API key with id or name {key_id_or_name!r}; 'veracity keys list' shows them")
    if len(matches) > 1:
        ids = ", ".join(k.key_id for k in matches)
        raise ValidationError(f"{len(matches)} keys are named {wanted!r} ({ids}); revoke one by its id")
    key = matches[0]
    moment = key.revoked_at or datetime.now(UTC).isoformat(timespec="seconds")
    store = _store(kb)
    with store.transaction():
        set_revoked(store.connection, key.key_id, moment)
    return ApiKey(**{**key.as_dict(), "roles": key.roles, "revoked_at": moment})


def authenticate(kb: LocalKnowledgeBase | DatabaseStore, presented: str | None) -> ApiKey:
    """The key record for ``presented``, or ``AuthenticationError`` (missing, malformed, unknown, revoked).

    ``kb`` may be a store of its own on the knowledge base's file (a service
    checks keys without waiting for the connection answers are computed on).
    """
    match = _KEY.fullmatch((presented or "").strip())
    if match is None:
        raise AuthenticationError(_DENIED)
    key_id, secret = match.groups()
    store = _store(kb)
    with store.read():
        found = key_with_digest(store.connection, key_id)
    if found is None:
        raise AuthenticationError(_DENIED)
    key, salt, digest = found
    if not hmac.compare_digest(_digest(salt, secret), digest) or key.revoked_at is not None:
        raise AuthenticationError(_DENIED)
    return key
