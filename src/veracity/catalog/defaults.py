"""What a knowledge base remembers about how it is asked: its default tenant and ask defaults.

Stored in the knowledge base's ``kb_settings`` table (JSON values, read and
written by :mod:`veracity.catalog.settings`), so they travel with it:

- ``default_tenant``: the tenant of documents that name none and of questions
  that name none. Set by the first ingest: ``--tenant``, else the tenant of the
  ``tenant.yaml`` in the ingested folder (when there is exactly one), else the
  one tenant every added document declares, else :data:`DEFAULT_TENANT`. A
  knowledge base written before settings existed reads as :data:`DEFAULT_TENANT`.
- ``non_official/<tenant>``: whether that tenant's community sources may answer
  a question no official source covers (``marked``, the default: the claim is
  marked as a community source) or are only cited as related (``related``);
  set from ``non_official:`` in the tenant's ``tenant.yaml``.
- ``ask_defaults/<tenant>``: what ``ask`` uses for that tenant when the caller
  gives nothing: roles, product version, moment and question. Only a
  ``tenant.yaml`` with a ``defaults:`` block (the bundled demo's) sets them;
  without them ``ask`` uses :data:`DEFAULT_ROLES`, no version filter and now.
- ``overrides/<name>``: the retrieval settings the knowledge base changes for itself
  (:mod:`veracity.kb.overrides`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import apsw

from ..model.errors import ValidationError
from ..model.governance import NON_OFFICIAL_POLICIES
from ..parse.documents import parse_moment
from .settings import get_setting, put_setting, settings_under

__all__ = [
    "DEFAULT_ROLES",
    "DEFAULT_TENANT",
    "AskDefaults",
    "ask_defaults",
    "ask_defaults_from_tenant_file",
    "default_tenant",
    "has_default_tenant",
    "non_official_policies",
    "set_ask_defaults",
    "set_default_tenant",
    "set_non_official_policy",
]

DEFAULT_TENANT: Final = "default"
DEFAULT_ROLES: Final = ("public",)


@dataclass(frozen=True, slots=True)
class AskDefaults:
    """What ``ask`` uses for a tenant when the caller gives nothing (see the module docstring)."""

    roles: tuple[str, ...] = DEFAULT_ROLES
    version: str | None = None
    as_of: datetime | None = None
    question: str | None = None

    def as_json(self) -> dict[str, Any]:
        """Plain data, as stored."""
        return {
            "roles": list(self.roles),
            "version": self.version,
            "as_of": self.as_of.isoformat() if self.as_of else None,
            "question": self.question,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> AskDefaults:
        """Inverse of :meth:`as_json`."""
        as_of = raw.get("as_of")
        return cls(
            roles=tuple(raw.get("roles") or DEFAULT_ROLES),
            version=raw.get("version"),
            as_of=parse_moment(as_of, document="kb_settings", field="as_of") if as_of else None,
            question=raw.get("question"),
        )


def has_default_tenant(connection: apsw.Connection) -> bool:
    """Whether the default tenant was recorded (by a first ingest or ``init-demo``)."""
    return get_setting(connection, "default_tenant") is not None


def default_tenant(connection: apsw.Connection) -> str:
    """The knowledge base's default tenant (:data:`DEFAULT_TENANT` when none was recorded)."""
    value = get_setting(connection, "default_tenant")
    return str(value) if value else DEFAULT_TENANT


def set_default_tenant(connection: apsw.Connection, tenant: str) -> None:
    """Record the default tenant (call inside a transaction)."""
    put_setting(connection, "default_tenant", tenant)


def ask_defaults(connection: apsw.Connection, tenant: str) -> AskDefaults:
    """The ask defaults recorded for ``tenant``, else the general ones."""
    raw = get_setting(connection, f"ask_defaults/{tenant}")
    return AskDefaults.from_json(raw) if isinstance(raw, dict) else AskDefaults()


def set_ask_defaults(connection: apsw.Connection, tenant: str, defaults: AskDefaults) -> None:
    """Record ``tenant``'s ask defaults (call inside a transaction)."""
    put_setting(connection, f"ask_defaults/{tenant}", defaults.as_json())


def ask_defaults_from_tenant_file(raw: Mapping[str, Any], roles: Sequence[str]) -> AskDefaults | None:
    """Ask defaults from a parsed ``tenant.yaml`` (its ``defaults:`` block); ``None`` without one."""
    block = raw.get("defaults")
    if not isinstance(block, Mapping):
        return None
    role = block.get("role")
    as_of = block.get("as_of")
    return AskDefaults(
        roles=(str(role),) if role else tuple(roles[:1]) or DEFAULT_ROLES,
        version=str(block["target_version"]) if block.get("target_version") else None,
        as_of=parse_moment(as_of, document="tenant.yaml", field="as_of") if as_of else None,
        question=str(raw["running_question"]) if raw.get("running_question") else None,
    )


def non_official_policies(connection: apsw.Connection) -> dict[str, str]:
    """Every tenant's recorded non-official policy (tenants without one use ``marked``)."""
    found = settings_under(connection, "non_official/")
    return {key.split("/", 1)[1]: str(value) for key, value in found.items()}


def check_non_official(policy: str, *, document: str = "tenant.yaml") -> str:
    """``policy`` if it is a non-official policy; ``ValidationError`` naming the valid ones otherwise."""
    if policy not in NON_OFFICIAL_POLICIES:
        valid = ", ".join(NON_OFFICIAL_POLICIES)
        raise ValidationError(
            f"non_official {policy!r} is not a policy; valid values: {valid}",
            document=document,
            field="non_official",
        )
    return policy


def set_non_official_policy(connection: apsw.Connection, tenant: str, policy: str) -> None:
    """Record ``tenant``'s non-official policy (call inside a transaction)."""
    put_setting(connection, f"non_official/{tenant}", check_non_official(policy))
