"""Index-version commands on a knowledge-base directory: reindex, publish, rollback.

Registered on the ``veracity`` group by :mod:`veracity.cli.main`. Thin: parse, call
:mod:`veracity.kb.reindex`, print the verification and what was published.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import click

from ..model.errors import IndexVerificationError
from .common import (
    KB_OPTION,
    NO_WAIT_OPTION,
    embedder_option,
    library_errors,
    open_knowledge_base,
    progress_bar,
)

JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
PROGRESS_OPTION = click.option(
    "--progress/--no-progress", default=True, show_default=True, help="Show a progress bar."
)


def _report_dict(report: Any) -> dict[str, Any]:
    sync = report.sync
    return {
        "action": report.action,
        "version": report.version,
        "published": report.published,
        "replaced": report.replaced,
        "dropped": list(report.dropped),
        "abandoned": list(report.abandoned),
        "indexed_documents": sync.added_documents,
        "indexed_chunks": sync.indexed_chunks,
        "embedded_chunks": sync.embedded_chunks,
        "embed_seconds": round(sync.embed_seconds, 3),
        "seconds": round(report.seconds, 3),
        "verification": report.verification.as_dict(),
    }


def _echo_checks(verification: Any) -> None:
    for check in verification.checks:
        mark = "ok  " if check.passed else "FAIL"
        click.echo(f"  {mark} {check.name:<9} {check.detail}")


def _echo(report: Any, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(_report_dict(report), ensure_ascii=False, sort_keys=True, indent=2))
        return
    sync = report.sync
    if report.action == "reindex":
        click.echo(
            f"built index version {report.version}: {sync.added_documents} documents, "
            f"{sync.indexed_chunks} chunks ({sync.embedded_chunks} embedded in {sync.embed_seconds:.1f} s)"
        )
    elif sync.indexed_chunks or sync.updated_documents or sync.removed_documents:
        click.echo(
            f"caught up version {report.version} with the catalog: {sync.added_documents} documents added, "
            f"{sync.updated_documents} updated, {sync.removed_documents} removed"
        )
    click.echo("verification:")
    _echo_checks(report.verification)
    if report.published:
        replaced = f" (was {report.replaced})" if report.replaced is not None else ""
        click.echo(f"published index version {report.version}{replaced} in {report.seconds:.1f} s")
    else:
        click.echo(f"index version {report.version} verified, not published; publish it with "
                   f"'veracity publish --kb DIR --version {report.version}'")  # fmt: skip
    for version in report.abandoned:
        click.echo(f"version {version}: abandoned build cleaned up")
    for version in report.dropped:
        click.echo(f"version {version}: dropped (only the most recent earlier versions are kept)")


@contextmanager
def _verification_reported() -> Iterator[None]:
    """Print every check of a failed verification, then exit 1 (other errors go to click)."""
    with library_errors():
        try:
            yield
        except IndexVerificationError as exc:
            _verification_failed(exc)


def _verification_failed(exc: IndexVerificationError) -> NoReturn:
    click.echo("verification:", err=True)
    for check in exc.verification.checks:
        mark = "ok  " if check.passed else "FAIL"
        click.echo(f"  {mark} {check.name:<9} {check.detail}", err=True)
    click.echo(f"error: {exc}", err=True)
    sys.exit(1)


@click.command("reindex")
@KB_OPTION
@embedder_option("Dense model of the new version (default: the published version's).")
@click.option(
    "--no-publish", is_flag=True, help="Build and verify only; publish later with 'veracity publish'."
)
@click.option(
    "--keep",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Earlier versions kept for rollback; older ones are dropped after publishing.",
)
@PROGRESS_OPTION
@JSON_OPTION
@NO_WAIT_OPTION
def reindex_command(
    kb_dir: Path, embedder: str | None, no_publish: bool, keep: int, progress: bool, as_json: bool,
    no_wait: bool,
) -> None:  # fmt: skip
    """Rebuild the index from the catalog as a new version, verify it, then publish it.

    The published version keeps answering until the new one has passed every
    check (counts, digests against the catalog, fixed queries); a failed or
    interrupted build is never published.
    """
    from ..index.embedders import make_embedder
    from ..kb.reindex import rebuild

    with _verification_reported(), progress_bar(progress and not as_json) as callback:
        kb = open_knowledge_base(kb_dir, no_wait=no_wait)
        model = make_embedder(embedder) if embedder else None
        on_progress = (lambda done, total: callback("index", done, total)) if callback else None
        report = rebuild(kb, kb_dir, embedder=model, publish=not no_publish, keep=keep, progress=on_progress)
    _echo(report, as_json)


@click.command("publish")
@KB_OPTION
@click.option(
    "--version", "version", type=int, default=None, help="Version to publish (default: newest verified)."
)
@JSON_OPTION
@NO_WAIT_OPTION
def publish_command(kb_dir: Path, version: int | None, as_json: bool, no_wait: bool) -> None:
    """Publish a version built with 'reindex --no-publish' (or an earlier one), after verifying it again."""
    from ..kb.reindex import publish

    with _verification_reported():
        report = publish(open_knowledge_base(kb_dir, no_wait=no_wait), kb_dir, version)
    _echo(report, as_json)


@click.command("rollback")
@KB_OPTION
@JSON_OPTION
@NO_WAIT_OPTION
def rollback_command(kb_dir: Path, as_json: bool, no_wait: bool) -> None:
    """Go back to the index version published before the current one.

    The catalog stays as it is: the earlier version is caught up with catalog
    changes and verified before it is published again.
    """
    from ..kb.reindex import rollback

    with _verification_reported():
        report = rollback(open_knowledge_base(kb_dir, no_wait=no_wait), kb_dir)
    _echo(report, as_json)


INDEX_COMMANDS = (reindex_command, publish_command, rollback_command)
