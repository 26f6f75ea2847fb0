"""What an operator key manages of its own tenant beyond documents: keys and quarantined text.

Each call checks the key is an operator's and acts on its tenant alone: keys are listed without
secrets and a new key's secret is returned once; a key of another tenant is reported as not
found. The quarantine lists the chunks of the tenant's non-official documents whose stored
detector verdict gives signals (what an answer holds back), with the signals' names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ...kb.keys import create_key, list_keys, revoke_key
from ...model.contracts import Status, Trust
from ...model.errors import IdentityError, NotFoundError, ValidationError
from ...pipeline.injection import verdict_key
from .gateway import Caller, Gateway

__all__ = ["EXCERPT_CHARS", "Admin"]

EXCERPT_CHARS: Final = 160
"""Characters of quarantined text an operator view shows (enough to judge, not a copy)."""


class Admin:
    """Keys and quarantine of an operator's tenant, through ``gate`` (its lock and catalog)."""

    def __init__(self, gate: Gateway) -> None:
        self.gate = gate

    def keys(self, caller: Caller) -> list[dict[str, Any]]:
        """The tenant's keys (revoked ones included), never a secret."""
        self.gate.require_operator(caller)
        with self.gate.lock:
            return [key.as_dict() for key in list_keys(self.gate.kb, caller.principal.tenant)]

    def create(
        self, caller: Caller, name: str | None, roles: Sequence[str], operator: bool = False
    ) -> dict[str, Any]:
        """A new key of the tenant; its secret is in the answer and nowhere else, ever."""
        self.gate.require_operator(caller)
        wanted = [str(role).strip() for role in roles if str(role).strip()]
        if not wanted:
            raise ValidationError('a key needs at least one role, e.g. ["public"]', field="roles")
        with self.gate.lock:
            try:
                made = create_key(
                    self.gate.kb, tenant=caller.principal.tenant, roles=wanted, operator=operator, name=name
                )
            except IdentityError as exc:  # a role the tenant lacks: the request is wrong, not the caller
                raise ValidationError(str(exc), field="roles") from None
        return {**made.key.as_dict(), "secret": made.secret}

    def revoke(self, caller: Caller, key_id: str) -> dict[str, Any]:
        """Revoke a key of the tenant (by id); another tenant's key is not found."""
        self.gate.require_operator(caller)
        with self.gate.lock:
            owned = {key.key_id for key in list_keys(self.gate.kb, caller.principal.tenant)}
            if key_id not in owned:
                raise NotFoundError(f"no API key {key_id!r} in this tenant")
            return revoke_key(self.gate.kb, key_id).as_dict()

    def quarantine(self, caller: Caller) -> list[dict[str, Any]]:
        """The tenant's active non-official chunks that a stored verdict holds back, with its signals."""
        self.gate.require_operator(caller)
        tenant = caller.principal.tenant
        store = self.gate.store
        signals_of = getattr(store, "stored_signals", None)
        if signals_of is None:
            return []
        held = []
        with self.gate.lock:
            catalog = self.gate.kb.engine.catalog
            for document in catalog.documents(tenant):
                if document.status is not Status.ACTIVE or document.trust is Trust.OFFICIAL:
                    continue
                for chunk in catalog.chunks(document.document_id):
                    signals = signals_of(verdict_key(chunk.text, tuple(chunk.heading_path)))
                    if signals:
                        held.append({
                            "id": document.source_id, "document_id": document.document_id,
                            "title": document.title, "trust": document.trust.value,
                            "chunk_id": chunk.chunk_id, "heading_path": list(chunk.heading_path),
                            "signals": list(signals),
                            "excerpt": chunk.text[:EXCERPT_CHARS],
                        })  # fmt: skip
        return held
