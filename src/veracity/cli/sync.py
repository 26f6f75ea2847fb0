"""``veracity sync``: keep a knowledge base in step with the sources of a sources file."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

import click

from ..text.display import printable
from .common import (
    NO_WAIT_OPTION,
    embedder_option,
    kb_option,
    library_errors,
    print_json,
    progress_bar,
    writer_options,
)

__all__ = ["sync_command", "sync_folder"]


def sync_folder(kb_dir: Any) -> Path:
    """Where git mirrors and fetched pages are kept between syncs: ``KB/sync`` for a directory,
    else a folder of the user's cache named after the database URL (its password left out)."""
    if isinstance(kb_dir, Path):
        return kb_dir / "sync"
    from urllib.parse import urlsplit

    parts = urlsplit(str(kb_dir))
    key = f"{parts.hostname}:{parts.port}{parts.path}"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "veracity" / "sync" / hashlib.sha256(key.encode()).hexdigest()[:16]


def _line(outcome: Any) -> str:
    head = f"{printable(outcome.name)} ({outcome.kind}"
    if commit := outcome.state.get("commit"):
        head += f" @ {commit[:12]}"
    head += ")"
    if outcome.error is not None:
        return f"{head}: FAILED, nothing changed: {printable(outcome.error)}"
    parts = [
        f"{outcome.files} files", f"read {outcome.read}", f"unchanged {outcome.unchanged}",
        f"added {len(outcome.added)}", f"revised {len(outcome.revised)}",
        f"withdrawn {len(outcome.withdrawn)}", f"deleted {len(outcome.deleted)}",
        f"rejected {len(outcome.rejected)}", f"chunks embedded {outcome.chunks_embedded}",
    ]  # fmt: skip
    if outcome.restored:
        parts.insert(7, f"restored {len(outcome.restored)}")
    if outcome.kind == "site":
        counts = outcome.counts
        parts.append(
            f"pages fetched {counts.get('fetched', 0)}, not modified {counts.get('not_modified', 0)}"
        )
    return f"{head}: " + " · ".join(parts) + f" · {outcome.seconds:.1f} s"


def outcome_json(outcome: Any) -> dict[str, Any]:
    """One source's outcome as JSON."""
    from ..ingest.run import undefined_roles_json  # here: the command line loads ingest only to sync

    return {
        "name": outcome.name, "kind": outcome.kind, "error": outcome.error, "files": outcome.files,
        "read": outcome.read, "unchanged": outcome.unchanged, "added": list(outcome.added),
        "revised": list(outcome.revised), "withdrawn": list(outcome.withdrawn),
        "deleted": list(outcome.deleted), "rejected": [list(pair) for pair in outcome.rejected],
        "restored": list(outcome.restored),
        "notes": [list(pair) for pair in outcome.notes],
        "undefined_roles": undefined_roles_json(outcome.undefined_roles),
        "kept_withdrawn": list(outcome.kept_withdrawn),
        "state": dict(outcome.state), "counts": dict(outcome.counts), "changes": outcome.changes,
        "chunks_embedded": outcome.chunks_embedded,
    }  # fmt: skip


@click.command("sync")
@kb_option("Knowledge base: a directory or a postgresql:// URL (created if it holds none; or $VERACITY_KB).")
@click.option(
    "--sources", "sources_file", type=click.Path(dir_okay=False, path_type=Path),
    default=Path("veracity.yaml"), show_default=True,
    help="The sources file (folders, git repositories, websites; see docs/sources.md).",
)  # fmt: skip
@click.option("--source", "only", multiple=True, help="Sync only this source (repeatable) [default: all].")
@click.option(
    "--work", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Where git mirrors and fetched pages are kept between syncs [default: KB/sync, or a folder "
    "under ~/.cache/veracity/sync for a database].",
)  # fmt: skip
@embedder_option("Dense model (a new knowledge base).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show progress bars.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome of each source as JSON.")
@NO_WAIT_OPTION
def sync_command(
    kb_dir: Any, sources_file: Path, only: tuple[str, ...], work: Path | None, embedder: str | None,
    progress: bool, as_json: bool, no_wait: bool,
) -> None:  # fmt: skip
    """Bring every source of the sources file up to date in the knowledge base.

    New and changed files become documents or revisions; files that left a source are
    withdrawn (or deleted, with the source's on_remove: delete); unchanged files are not read
    again. A git source records the commit each revision came from; a website source uses the
    page's URL as its id and in citations. A source that cannot be read (a failed clone, an
    unreachable site) changes nothing and is reported; `veracity status` shows each source's
    last sync and error. Exit status 1 when a source failed or a file was rejected.
    """
    from ..index.embedders import make_embedder
    from ..ingest.writing import writing
    from ..kb.directory import open_or_create_kb, write_manifest
    from ..sync.config import load_sources
    from ..sync.run import sync_sources

    with library_errors():
        specs = load_sources(sources_file)
        model = make_embedder(embedder) if embedder else None
        kb = open_or_create_kb(kb_dir, model, **writer_options(no_wait))
        with writing(kb, "sync"), progress_bar(progress and not as_json) as callback:
            step = (
                (lambda name, stage, done, total: callback(f"{name}: {stage}", done, total))
                if callback
                else None
            )
            outcomes = sync_sources(kb, specs, work=work or sync_folder(kb_dir), only=only, progress=step)
            write_manifest(kb_dir, kb)
    if as_json:
        print_json({"sources": [outcome_json(o) for o in outcomes]})
    else:
        for outcome in outcomes:
            click.echo(_line(outcome))
            for path, reason in outcome.rejected:
                click.echo(f"  rejected {printable(path)}: {printable(reason)}", err=True)
            for where, why in outcome.notes:
                click.echo(f"  left out {printable(where)}: {printable(why)}")
            if outcome.undefined_roles:
                named = ", ".join(f"{printable(n)} ({', '.join(r)})" for n, r in outcome.undefined_roles[:10])
                click.echo(
                    f"  allowed roles the tenant does not define, so nobody can use these "
                    f"{len(outcome.undefined_roles)} until the source's roles: defines them: {named}",
                    err=True,
                )
            if outcome.kept_withdrawn:
                kept = outcome.kept_withdrawn
                click.echo(
                    f"  changed since withdrawn, stored withdrawn (not served) {len(kept)}: "
                    f"{', '.join(map(printable, kept[:10]))} (ingest --restore serves them)"
                )
    if any(o.error is not None or o.rejected for o in outcomes):
        sys.exit(1)
