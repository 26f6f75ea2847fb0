"""Which tenant an ingest writes for, and which roles each tenant defines afterwards.

:func:`resolve_tenants` reads the ``tenant.yaml`` files found in the ingested
folders and decides the default tenant (see :mod:`veracity.catalog.defaults`: the
first ingest records it; when it names none, by ``--tenant`` or a single
``tenant.yaml``, and every document it adds declares the same tenant, that
tenant becomes the default). :meth:`TenantSetup.apply` then, after the files are
in: adds the roles from ``tenant.yaml`` and ``roles=`` (to ``--tenant``, else
to the default tenant), gives every tenant that has documents but defines no
role :data:`~veracity.catalog.defaults.DEFAULT_ROLES` (otherwise its public
documents would be visible to no one), and records the default tenant and the
ask defaults a ``tenant.yaml`` declares.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..catalog.defaults import (
    DEFAULT_ROLES,
    DEFAULT_TENANT,
    AskDefaults,
    ask_defaults_from_tenant_file,
    check_non_official,
    default_tenant,
    has_default_tenant,
    set_ask_defaults,
    set_default_tenant,
    set_non_official_policy,
)
from ..catalog.store import DatabaseStore
from ..model.contracts import Document
from ..model.errors import ValidationError
from ..parse.yaml_text import load_yaml, yaml_problem
from ..pipeline.engine import Engine

__all__ = ["TenantSetup", "read_tenant_file", "resolve_tenants"]


def read_tenant_file(file: Path) -> tuple[str, list[str], dict[str, Any]]:
    """``(tenant, roles, raw)`` of a ``tenant.yaml``; ``ValidationError`` naming the file otherwise."""
    try:
        raw: Any = load_yaml(file.read_text(encoding="utf-8"), source=str(file), what="tenant file") or {}
    except OSError as exc:
        raise ValidationError(f"cannot read tenant roles: {exc}", document=str(file)) from None
    except yaml.YAMLError as exc:
        raise ValidationError(f"cannot read tenant roles: {yaml_problem(exc)}", document=str(file)) from None
    tenant, roles = raw.get("tenant") if isinstance(raw, dict) else None, raw.get("roles", [])
    if not isinstance(tenant, str) or not isinstance(roles, list) or not all(
        isinstance(role, str | int) for role in roles
    ):
        raise ValidationError("expected 'tenant: NAME' and 'roles: [..]'", document=str(file))
    return tenant, [str(role) for role in roles], raw


@dataclass
class TenantSetup:
    """The default tenant of this ingest and the role and ask-default changes to apply."""

    default_tenant: str
    record_default: bool = False
    role_updates: dict[str, set[str]] = field(default_factory=dict)
    ask_defaults: dict[str, AskDefaults] = field(default_factory=dict)
    non_official: dict[str, str] = field(default_factory=dict)
    named: bool = False  # the default tenant came from --tenant or a tenant.yaml, not the fallback

    def apply(
        self, kb: Engine, documents: Iterable[Document]
    ) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], tuple[str, ...]]:
        """Define roles and record settings; return the roles defined and the tenants given default roles."""
        catalog = kb.catalog
        store = catalog.store
        connection = store.connection if isinstance(store, DatabaseStore) else None
        defined: list[tuple[str, tuple[str, ...]]] = []
        given_defaults: list[str] = []
        documents = list(documents)
        declared = {d.tenant for d in documents}
        if self.record_default and not self.named and len(declared) == 1:
            # every document of a first ingest names the same tenant: that is the one to ask as
            self.default_tenant = declared.pop()
        # a first ingest that stored nothing under a tenant nobody named (an empty folder, every
        # file rejected) leaves the choice to the next ingest instead of fixing the fallback
        settles = bool(documents) or self.named
        with store.transaction():
            for name, wanted in sorted(self.role_updates.items()):
                merged = set(catalog.roles(name)) | wanted
                catalog.define_roles(name, merged)
                defined.append((name, tuple(sorted(merged))))
            for name in sorted({d.tenant for d in documents} | {self.default_tenant}):
                if not catalog.roles(name) and (
                    (name == self.default_tenant and settles) or catalog.documents(name)
                ):
                    catalog.define_roles(name, DEFAULT_ROLES)
                    given_defaults.append(name)
            if connection is not None:
                if self.record_default and settles:
                    set_default_tenant(connection, self.default_tenant)
                for name, values in sorted(self.ask_defaults.items()):
                    set_ask_defaults(connection, name, values)
                for name, policy in sorted(self.non_official.items()):
                    set_non_official_policy(connection, name, policy)
                    kb.non_official_policies[name] = policy
        return tuple(defined), tuple(given_defaults)


def resolve_tenants(
    kb: Engine, tenant_files: Sequence[Path], *, tenant: str | None, roles: Sequence[str]
) -> TenantSetup:
    """Read ``tenant_files`` and decide the default tenant (see the module docstring)."""
    if tenant is not None and not tenant.strip():
        raise ValidationError("the tenant is empty; give a name or leave the option out", field="tenant")
    updates: dict[str, set[str]] = {}
    asks: dict[str, AskDefaults] = {}
    policies: dict[str, str] = {}
    for file in tenant_files:
        name, listed, raw = read_tenant_file(file)
        updates.setdefault(name, set()).update(listed)
        declared = ask_defaults_from_tenant_file(raw, listed)
        if declared is not None:
            asks[name] = declared
        if raw.get("non_official") is not None:
            policy = check_non_official(str(raw["non_official"]), document=str(file))
            policies[name] = policy
    store = kb.catalog.store
    connection = store.connection if isinstance(store, DatabaseStore) else None
    if connection is not None and has_default_tenant(connection):
        first, chosen, named = False, default_tenant(connection), True
    else:
        listed = sorted(updates)
        named = bool(tenant) or len(listed) == 1
        first, chosen = True, tenant or (listed[0] if len(listed) == 1 else DEFAULT_TENANT)
    clean = [role.strip() for role in roles if role.strip()]
    if clean:
        updates.setdefault(tenant or chosen, set()).update(clean)
    return TenantSetup(
        chosen, first and connection is not None, updates, asks, policies, named or bool(clean)
    )
