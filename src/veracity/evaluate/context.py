"""What the evaluation checks share: the knowledge base under test and the shape of a result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..catalog.catalog import Catalog
from ..catalog.sqlite import SQLiteStore
from ..pipeline.engine import Engine

CaseOutput = tuple[dict[str, Any], dict[str, Any] | None]


@dataclass
class Context:
    """What checks share: the knowledge base under test, and the source ids that the
    cases label as carrying instructions (``params.injection_document``)."""

    kb: Engine
    instruction_sources: frozenset[str] = field(default_factory=frozenset)

    def fork(self) -> Engine:
        """A knowledge base with a private copy of the catalog and the same (now stale) index."""
        catalog = Catalog(SQLiteStore(":memory:"))
        source = self.kb.catalog
        tenants = {d.tenant for d in source.documents()}
        for tenant in sorted(tenants):
            catalog.define_roles(tenant, source.roles(tenant))
        for document in source.documents():
            catalog.add(document, source.chunks(document.document_id))
        forked = Engine(
            catalog, self.kb.embedder, reranker=self.kb.reranker, settings=self.kb.settings
        )
        forked.snapshot = self.kb.snapshot
        return forked
