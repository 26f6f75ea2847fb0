"""``veracity search``: the ranked chunks an asker may use for a query, without an answer.

The retrieval half of ``veracity ask``, through
:meth:`~veracity.kb.local.LocalKnowledgeBase.search`: every gate an ask has (eligibility
before scoring, the return gate, the evidence step's quarantine), then the chunks in rank order
with their scores. For checking what a question finds before judging the answer, or for a tool
that writes its own. The same defaults as ``ask`` (with ``--kb`` the knowledge base's own,
without it the built-in demo's).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .ask import asker_of, asker_options, check_as_of, check_text, open_for_asking, scope_options
from .common import kb_option, library_errors, print_json, use_read_url

__all__ = ["search_command"]

SNIPPET_CHARS = 240
SNIPPET_LINES = 4
"""How much of each chunk's text the plain output shows (``--full``: all of it)."""
DEMO_SEARCH_NOTICE = "searching the built-in Starship demo (use --kb DIR to search your own knowledge base)"


@click.command("search")
@click.argument("query")
@asker_options
@click.option(
    "--limit", type=click.IntRange(1, 100), default=10, show_default=True, help="How many chunks at most."
)
@click.option("--full", is_flag=True, help="Print each chunk's whole text (default: its first lines).")
@kb_option(
    "Knowledge base directory or postgresql:// URL [default: $VERACITY_KB, else the built-in demo].",
    required=False,
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON: the query and every hit with its text, as POST /v1/search gives them, plus each "
    "hit's path, revision and trust.",
)
def search_command(
    query: str,
    role: str | None,
    tenant: str | None,
    version: str | None,
    as_of: str | None,
    embedder: str | None,
    read_url: str | None,
    limit: int,
    full: bool,
    kb_dir: Path | None,
    as_json: bool,
) -> None:
    """The chunks QUERY finds that the asker may use, best first, with their scores; no answer.

    Every gate of 'veracity ask' applies (tenant, role, version, validity and status before
    any score; the live catalog re-checked; quarantined chunks left out). With --kb: as the
    knowledge base's default tenant, role public, about every product version, as of now.
    Without --kb it searches the built-in demo.
    """
    use_read_url(read_url, kb_dir)
    if not query.strip():
        raise click.BadParameter("the query is empty; search for something", param_hint="QUERY")
    if kb_dir is None and not as_json:
        click.echo(DEMO_SEARCH_NOTICE, err=True)
    check_as_of(as_of)
    check_text(query, "QUERY")
    with library_errors():
        kb = open_for_asking(kb_dir, embedder)
        hits = kb.search(query, **scope_options(asker_of(kb, tenant, role), version, as_of), limit=limit)
    if as_json:
        print_json({
            "query": query,
            "knowledge_base": str(kb_dir) if kb_dir is not None else "built-in demo",
            "hits": [_hit_data(hit) for hit in hits],
            "degraded": [],  # as the service's reply: a local search has every component or fails
        })  # fmt: skip
        return
    if not hits:
        click.echo("no chunk this asker may use matches the query")
        return
    for hit in hits:
        click.echo(_hit_text(hit, full=full))


def _hit_data(hit: Any) -> dict[str, Any]:
    """A hit in the shape of a ``POST /v1/search`` hit (without the page regions, which a
    :class:`~veracity.kb.search.SearchHit` does not carry), plus where the file is, its revision
    and its trust."""
    from ..pipeline.render import page_label

    return {
        "rank": hit.rank,
        "chunk_id": hit.chunk_id,
        "document_id": hit.document_id,
        "id": hit.source_id,
        "title": hit.title,
        "heading_path": list(hit.heading_path),
        "pages": page_label(hit.page_start, hit.page_end),
        "text": hit.text,
        "scores": {
            "lexical": hit.lexical,
            "semantic": hit.semantic,
            "fusion": hit.fusion,
            "rerank": hit.rerank,
        },
        "path": hit.path,
        "revision": hit.revision,
        "trust": hit.trust,
    }


def _hit_text(hit: Any, *, full: bool) -> str:
    where = hit.path or hit.source_id
    heading = " > ".join(hit.heading_path) or "(top)"
    pages = ""
    if hit.page_start is not None:
        end = hit.page_end if hit.page_end is not None else hit.page_start
        pages = f" · p. {hit.page_start}" if end == hit.page_start else f" · pp. {hit.page_start}-{end}"
    trust = "" if hit.trust == "official" else f" · {hit.trust}"
    score = "" if hit.rerank is None else f" · score {hit.rerank:.4f}"
    chunk = hit.chunk_id[:12]
    head = f"{hit.rank}. {where} rev {hit.revision} · {heading}{pages}{trust}{score} · chunk {chunk}"
    lines = [line.rstrip() for line in hit.text.strip().split("\n")]
    if not full:
        lines = _snippet([line for line in lines if line.strip()])
    body = "\n".join(f"   {line}" if line else "" for line in lines)
    return f"{head}\n{body}\n"


def _snippet(lines: list[str]) -> list[str]:
    """The first :data:`SNIPPET_LINES` lines, :data:`SNIPPET_CHARS` characters in all, and a mark
    where anything was left out."""
    kept: list[str] = []
    left = SNIPPET_CHARS
    for line in lines[:SNIPPET_LINES]:
        if len(line) > left:
            kept.append(line[:left].rstrip() + " …")
            return kept
        kept.append(line)
        left -= len(line)
    if len(lines) > len(kept):
        kept[-1] += " …"
    return kept
