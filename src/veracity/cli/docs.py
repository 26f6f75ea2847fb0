"""``veracity docs list|show`` and ``veracity chunk``: look at the documents of a knowledge base.

Thin: parse, one call into :mod:`veracity.kb.browse`, print a table or JSON.
With ``--kb`` they read that knowledge base; without it the built-in demo.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from .common import kb_option, library_errors, print_json, print_table

__all__ = ["chunk_command", "docs"]

KB_READ_OPTION = kb_option(
    "Knowledge base directory or postgresql:// URL [default: $VERACITY_KB, else the built-in demo].",
    exists=True,
    required=False,
)
TENANT_OPTION = click.option("--tenant", help="Only this tenant's documents.")
OPERATOR_NOTE = (
    "Operator view: no principal is checked, every document is shown. A multi-user service must "
    "never expose this; it gets its own principal-checked endpoints."
)


@contextmanager
def _catalog(kb_dir: Path | None) -> Iterator[tuple[Any, dict[tuple[str, str], str]]]:
    """The catalog to read and the source paths it remembers (the demo: none)."""
    if kb_dir is None:
        from ..catalog.demo import demo_catalog

        yield demo_catalog(), {}
        return
    from ..catalog.catalog import Catalog
    from ..catalog.sources import source_paths
    from ..kb.backends import open_store
    from ..kb.manifest import read_manifest

    read_manifest(kb_dir)  # a clear error when the folder is not a knowledge base
    store = open_store(kb_dir)
    try:
        yield Catalog(store), source_paths(store.connection)
    finally:
        store.close()


@click.group(epilog=OPERATOR_NOTE)
def docs() -> None:
    """Inspect the documents of a knowledge base (--kb) or of the built-in demo (operator view)."""


@docs.command("list", epilog=OPERATOR_NOTE)
@KB_READ_OPTION
@TENANT_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def docs_list(kb_dir: Path | None, tenant: str | None, as_json: bool) -> None:
    """List documents: id, title, source path, revision, status, governance, chunk count (operator view)."""
    from ..kb.browse import document_rows

    with library_errors(), _catalog(kb_dir) as (catalog, paths):
        rows = document_rows(catalog, tenant, paths)
    if as_json:
        print_json(rows)
    elif rows:
        documents = len({(row["tenant"], row["id"]) for row in rows})
        kind = "documents" if documents == len(rows) else "revisions"  # a row is one revision
        counted = f"{len(rows)} {kind}" + ("" if documents == len(rows) else f" of {documents} documents")
        print_table(_informative(rows), title=counted)
        defaulted = sum(bool(row["defaults"]) for row in rows)
        if defaulted:
            click.echo(f"{defaulted} {kind} took default governance fields; 'docs show ID' names them")
    else:
        click.echo(f"no documents for tenant {tenant!r}" if tenant else "no documents")


def _informative(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The table view: columns that say something.

    Not all empty; a tenant only when there are several; a path only when it
    is not the id plus a suffix; the defaults taken are counted below the table.
    """

    def says_something(key: str) -> bool:
        values = [row[key] for row in rows]
        if key == "defaults" or not any(value not in ("", None) for value in values):
            return False
        if key == "tenant":
            return len(set(values)) > 1
        if key == "path":
            return any(str(Path(row["path"]).with_suffix("")) != row["id"] for row in rows if row["path"])
        return True

    keep = [key for key in rows[0] if says_something(key)]
    return [{key: row[key] for key in keep} for row in rows]


@docs.command("show", epilog=OPERATOR_NOTE)
@click.argument("document_id")
@KB_READ_OPTION
@click.option("--tenant", help="The tenant the document belongs to (source ids are per tenant).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def docs_show(document_id: str, kb_dir: Path | None, tenant: str | None, as_json: bool) -> None:
    """Show one document (source id or 64-hex document id): metadata, path, revisions, chunks.

    Operator view.
    """
    from ..kb.browse import show_document

    with library_errors(), _catalog(kb_dir) as (catalog, paths):
        _, _, detail = show_document(catalog, document_id, tenant, paths)
    if as_json:
        print_json(detail)
        return
    chunks = detail.pop("chunks")
    facts = detail.pop("facts")
    revisions = detail.pop("revisions")
    for key, value in detail.items():
        click.echo(f"{key:>16}: {value}")
    for fact in facts:
        click.echo(f"{'fact':>16}: {fact['id']} ({fact['stance']})")
    for revision in revisions:
        short = revision["document_id"][:12]
        click.echo(f"{'revision':>16}: {revision['revision']} {revision['status']} {short}")
    print_table(
        [
            {
                "#": c["ordinal"],
                "chunk_id": c["chunk_id"][:16],
                "heading_path": " > ".join(c["heading_path"]),
                "offsets": f"{c['start']}–{c['end']}",
                "kind": c["kind"],
                "facts": ", ".join(c["fact_ids"]),
            }
            for c in chunks
        ],
        title=f"{len(chunks)} chunks",
    )


@click.command("chunk", epilog=OPERATOR_NOTE)
@click.argument("document_id")
@KB_READ_OPTION
@click.option("--tenant", help="The tenant the document belongs to (source ids are per tenant).")
@click.option(
    "--strategy",
    type=click.Choice(["fixed", "structural", "contextual"]),
    default="structural",
    show_default=True,
)
@click.option("--size", default=400, show_default=True, help="Character budget of a chunk.")
@click.option("--overlap", default=0, show_default=True, help="Overlap of fixed windows.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON with chunk texts.")
def chunk_command(
    document_id: str,
    kb_dir: Path | None,
    tenant: str | None,
    strategy: str,
    size: int,
    overlap: int,
    as_json: bool,
) -> None:
    """Show how a document splits into chunks (tables and code over twice the size are cut, as indexed).

    Operator view.
    """
    from ..kb.browse import find_document
    from ..parse.chunking import HARD_LIMIT_FACTOR, chunk_document
    from ..pipeline.render import chunk_dict

    with library_errors(), _catalog(kb_dir) as (catalog, _):
        document = find_document(catalog, document_id, tenant)
        chunks = chunk_document(
            document, strategy, size=size, overlap=overlap, max_block=HARD_LIMIT_FACTOR * size
        )
    if as_json:
        print_json([chunk_dict(c, text=True) for c in chunks])
        return
    for c in chunks:
        path = " > ".join(c.heading_path) or "(top)"
        click.secho(
            f"── #{c.ordinal} {c.kind.value} [{c.start}:{c.end}] {path} · {c.chunk_id[:12]}"
            + (f" · facts {', '.join(c.fact_ids)}" if c.fact_ids else ""),
            bold=True,
        )
        if c.context_prefix:
            click.secho(f"   prefix: {c.context_prefix}", dim=True)
        click.echo(c.text)
