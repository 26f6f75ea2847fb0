"""The bundled Starship Workbench demo as a catalog, without the engine (for operator views)."""

from __future__ import annotations

from ..fixtures import STARSHIP, fixture_documents, tenant_config
from ..ingest.chunking import chunk_for_index
from .catalog import Catalog
from .sqlite import SQLiteStore

__all__ = ["demo_catalog"]


def demo_catalog() -> Catalog:
    """A fresh in-memory catalog of the demo, chunked as its index is (the engine builds the same)."""
    config = tenant_config(STARSHIP)
    catalog = Catalog(SQLiteStore(":memory:"))
    catalog.define_roles(config.tenant, config.roles)
    for document in fixture_documents(STARSHIP):
        catalog.add(document, chunk_for_index(document))
    return catalog
