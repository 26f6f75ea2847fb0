"""Knowledge-base directory commands: ``veracity ingest`` and ``veracity init-demo``.

Registered on the ``veracity`` group by :mod:`veracity.cli.main`. Thin: parse,
call :mod:`veracity.kb.directory` / :mod:`veracity.kb.ingest`, print a summary.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .common import library_errors, progress_bar

__all__ = ["ingest_command", "init_demo_command"]


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--kb",
    "kb_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Knowledge base directory (created if it does not exist).",
)
@click.option("--tenant", help="Tenant of files whose front matter names none (others are rejected).")
@click.option("--roles", help="Comma-separated roles to define for --tenant (e.g. public,support).")
@click.option(
    "--embedder",
    type=click.Choice(["use", "e5", "fake"]),
    default=None,
    help="Dense model of a new knowledge base (default use); an existing one keeps its own.",
)
@click.option(
    "--metadata",
    "metadata_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="YAML/JSON file mapping paths or globs to governance metadata.",
)
@click.option(
    "--max-bytes",
    type=int,
    default=50_000_000,
    show_default=True,
    help="Reject files larger than this before reading them.",
)
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show a progress bar.")
def ingest_command(
    paths: tuple[Path, ...],
    kb_dir: Path,
    tenant: str | None,
    roles: str | None,
    embedder: str | None,
    metadata_file: Path | None,
    max_bytes: int,
    progress: bool,
) -> None:
    """Ingest files or folders into a knowledge base: Markdown, text, HTML, PDF, DOCX.

    Governance metadata comes from front matter (Markdown, HTML meta tags), a
    sidecar NAME.meta.yaml, or --metadata; a file missing a required field is
    rejected with the field named. PDF and DOCX need the 'pdf' / 'docx' extras.

    Idempotent: documents already in the catalog are left alone and nothing
    is embedded again. Prints what was added, revised, unchanged and rejected.
    """
    from ..index.embedders import make_embedder
    from ..kb.directory import open_or_create_kb, write_manifest
    from ..kb.ingest import ingest_paths

    role_list = [r.strip() for r in (roles or "").split(",") if r.strip()]
    with library_errors():
        kb = open_or_create_kb(kb_dir, make_embedder(embedder) if embedder else None)
        with progress_bar(progress) as callback:
            report = ingest_paths(
                kb,
                list(paths),
                tenant=tenant,
                roles=role_list,
                metadata_file=metadata_file,
                max_bytes=max_bytes,
                progress=callback,
            )
        write_manifest(kb_dir, kb)
    _print_ingest(report, kb_dir)
    if report.rejected:
        sys.exit(1)


def _print_ingest(report: Any, kb_dir: Path) -> None:
    seconds = report.seconds
    click.echo(
        f"{kb_dir}: added {len(report.added)} · revised {len(report.revised)} · "
        f"unchanged {len(report.unchanged)} · rejected {len(report.rejected)} · "
        f"chunks {report.chunks_added} · embedded {report.index.embedded_chunks}"
    )
    if report.chunks_added:
        click.echo(
            f"  {report.chunks_per_second_without_embedding:,.0f} chunks/s without embedding; "
            f"embedding {seconds.get('embed', 0.0):.1f} s"
        )
    for tenant, roles in report.roles_defined:
        click.echo(f"  tenant {tenant}: roles {', '.join(roles)}")
    for source, reason in report.rejected:
        click.echo(f"  rejected {source}: {reason}", err=True)


@click.command("init-demo")
@click.option("--kb", "kb_dir", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--embedder", type=click.Choice(["use", "e5", "fake"]), default=None, help="Dense model.")
def init_demo_command(kb_dir: Path, embedder: str | None) -> None:
    """Write the bundled Starship Workbench demo into a new knowledge base directory."""
    from ..index.embedders import make_embedder
    from ..kb.directory import init_demo_kb

    with library_errors():
        kb = init_demo_kb(kb_dir, make_embedder(embedder) if embedder else None)
        stats = kb.snapshot.stats()  # type: ignore[union-attr]
    click.echo(f"{kb_dir}: {stats.documents} documents, {stats.chunks} chunks, model {stats.model_id}")
