"""Catalogs built in memory from documents: any list of them with its tenants' roles, and the
bundled Starship Workbench demo's (for the engine's demo and for operator views)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..model.contracts import Document
from ..parse.chunking import chunk_for_index
from .catalog import Catalog
from .sqlite import SQLiteStore

__all__ = ["demo_catalog", "load_catalog"]


def load_catalog(
    documents: Iterable[Document], *, roles: dict[str, Sequence[str]], store_path: str = ":memory:"
) -> Catalog:
    """A catalog holding ``documents`` (chunked for the index) and the tenants' roles."""
    catalog = Catalog(SQLiteStore(store_path))
    for tenant, tenant_roles in roles.items():
        catalog.define_roles(tenant, tenant_roles)
    for document in documents:
        catalog.add(document, chunk_for_index(document))
    return catalog


def demo_catalog() -> Catalog:
    """A fresh in-memory catalog of the demo, chunked as its index is."""
    from ..fixtures import STARSHIP, fixture_documents, tenant_config  # the demo's YAML, when asked

    config = tenant_config(STARSHIP)
    return load_catalog(fixture_documents(STARSHIP), roles={config.tenant: config.roles})
