"""Each kind of source as a folder of files with fingerprints: what ``veracity sync`` ingests.

A folder source is read where it is; a git repository's tree at the wanted commit is written
(only the blobs that changed) under the sync folder; a website's fetched pages are written
there too, one file per canonical URL. Each file comes with a fingerprint (a digest of its
bytes, or a git blob id) that is the same exactly when the file is, and with the metadata the
source adds to a document read from it (the commit, the URL, the heading anchors). A source
that cannot be reached raises :class:`SourceError`: the caller then changes nothing.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final
from urllib.parse import urlsplit

from ..ingest.sources import scan_sources
from ..model.contracts import file_sha256
from .config import SourceSpec
from .git import GitError, list_tree, mirror, resolve_commit, write_blobs

__all__ = ["Materialized", "SourceError", "materialize", "page_path"]

_SUFFIXES: Final = {
    "text/html": ".html",
    "text/markdown": ".md",
    "text/x-markdown": ".md",
    "text/plain": ".txt",
}


class SourceError(RuntimeError):
    """A source could not be read (a failed clone, an unreachable site): nothing is changed for it."""


@dataclass(frozen=True, slots=True)
class Materialized:
    """A source as files under ``root``: ``path → fingerprint`` of every file that belongs to it.

    ``metadata`` holds what the source adds to the document read from a path (only paths that
    changed need it); ``states`` what to remember about a path for the next sync (a page's URL
    and validators); ``notes`` what was left out and why (a page too large, a failed fetch);
    ``state`` what the sync reached (a commit).
    """

    root: Path
    fingerprints: Mapping[str, str]
    metadata: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    states: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    notes: tuple[tuple[str, str], ...] = ()
    state: Mapping[str, Any] = field(default_factory=dict)
    counts: Mapping[str, int] = field(default_factory=dict)


Previous = Mapping[str, tuple[str, Mapping[str, Any]]]
"""``path → (fingerprint, state)`` as the last sync left them
(:func:`veracity.catalog.syncs.read_sync_files`); ``state["content"]`` is the file's own
fingerprint as materialized (the stored fingerprint also covers its sidecar and governance)."""


def _folder(spec: SourceSpec) -> Materialized:
    root = Path(spec.location)
    if not root.is_dir():
        raise SourceError(f"the folder {spec.location!r} does not exist (nothing was withdrawn)")
    scan = scan_sources([root])
    sidecars = [p for p in root.rglob("*.meta.yaml") if not any(part.startswith(".") for part in p.parts)]
    files = {f.source: file_sha256(f.path) for f in scan.files}
    files.update({p.relative_to(root).as_posix(): file_sha256(p) for p in sidecars})
    return Materialized(root, files)


def _git(spec: SourceSpec, work: Path, previous: Previous) -> Materialized:
    cache = work / f"{spec.name}.git"
    root = work / spec.name
    try:
        mirror(spec.location, cache)
        commit = resolve_commit(cache, spec.option("ref"))
        tree = list_tree(cache, commit, spec.option("path"))
        root.mkdir(parents=True, exist_ok=True)
        wanted = {
            path: blob for path, blob in tree.files.items()
            if previous.get(path, ("", {}))[1].get("content") != blob or not (root / path).is_file()
        }  # fmt: skip
        write_blobs(cache, wanted, root)
    except GitError as exc:
        raise SourceError(str(exc)) from None
    for path in sorted(set(previous) - set(tree.files)):
        (root / path).unlink(missing_ok=True)
    location = spec.location
    metadata = {p: {"source_commit": commit, "source_repository": location, "source_path": p} for p in wanted}
    return Materialized(
        root, tree.files, metadata=metadata, notes=tree.skipped, state={"commit": commit},
        counts={"blobs_written": len(wanted)},
    )  # fmt: skip


def page_path(url: str, content_type: str) -> str:
    """Where the page at ``url`` is written under the source's folder (POSIX, relative).

    ``/guide/`` → ``guide/index.html``; ``/a.html`` → ``a.html``; ``/b`` → ``b.html``; a query
    adds a short digest of it, so two queries of one path are two files.
    """
    parts = urlsplit(url)
    path = PurePosixPath(parts.path or "/")
    name = "index" if parts.path.endswith("/") or not path.name else path.name
    folder = path if parts.path.endswith("/") else path.parent
    suffix = _SUFFIXES.get(content_type, ".html")
    stem, dot, given = name.rpartition(".")
    if dot and f".{given.lower()}" in {".html", ".htm", ".md", ".txt"}:
        name, suffix = stem, f".{given.lower()}"
    if parts.query:
        name += "~" + hashlib.sha256(parts.query.encode()).hexdigest()[:10]
    safe = [p for p in folder.parts if p not in ("/", "", ".", "..")]
    return PurePosixPath(*safe, name + suffix).as_posix()


def _site(
    spec: SourceSpec, work: Path, previous: Previous, fetch: Any, progress: Callable[[int, int], None] | None
) -> Materialized:
    from .web import SiteSettings, Validators, crawl

    root = work / spec.name
    root.mkdir(parents=True, exist_ok=True)
    by_url = {
        str(state["url"]): (path, str(state.get("content", "")), state)
        for path, (_, state) in previous.items()
    }
    known = {  # a page whose copy is gone from the sync folder is fetched whole again
        url: Validators(state.get("etag"), state.get("last_modified"), tuple(state.get("links", ())))
        for url, (path, _, state) in by_url.items() if (root / path).is_file()
    }  # fmt: skip
    settings = SiteSettings(
        start_urls=tuple(spec.option("start")), sitemap=spec.option("sitemap"),
        max_pages=int(spec.option("max_pages", 500)), delay_s=float(spec.option("delay", 0.5)),
        max_bytes=int(spec.option("max_bytes", 5_000_000)),
    )  # fmt: skip
    result = crawl(settings, known, **({"fetch": fetch} if fetch is not None else {}), progress=progress)
    if result.error is not None:
        raise SourceError(f"the site could not be read: {result.error} (nothing was withdrawn)")
    fingerprints = {path: fingerprint for path, fingerprint, _ in by_url.values()}
    states: dict[str, Mapping[str, Any]] = {path: state for path, _, state in by_url.values()}
    metadata: dict[str, Mapping[str, Any]] = {}
    notes: list[tuple[str, str]] = [(spec.option("start")[0], note) for note in result.notes]
    counts = {"fetched": 0, "not_modified": 0, "gone": 0, "failed": 0, "too_large": 0, "excluded": 0}
    for page in result.pages:
        counts[page.state] = counts.get(page.state, 0) + 1
        known_path = by_url.get(page.url, (None,))[0]
        if page.state in ("gone", "excluded"):
            if known_path is not None:
                fingerprints.pop(known_path, None)
                states.pop(known_path, None)
                (root / known_path).unlink(missing_ok=True)
            notes.append((page.url, page.reason))
        elif page.state == "fetched" and page.body is not None:
            path = page_path(page.url, page.content_type)
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(page.body)
            fingerprints[path] = hashlib.sha256(page.body).hexdigest()
            validators = page.validators
            kept = {
                "etag": validators.etag,
                "last_modified": validators.last_modified,
                "links": list(validators.links),
            }
            states[path] = {"url": page.url, **{k: v for k, v in kept.items() if v}}
            anchors = [list(pair) for pair in page.anchors]
            metadata[path] = {"id": page.url, "source_url": page.url, "source_anchors": anchors}
        elif page.state in ("failed", "too_large"):
            notes.append((page.url, page.reason))
    return Materialized(
        root, dict(sorted(fingerprints.items())), metadata=metadata, states=states, notes=tuple(notes),
        counts={**counts, "requests": result.requests},
    )  # fmt: skip


def materialize(
    spec: SourceSpec, work: Path, previous: Previous, *, fetch: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> Materialized:  # fmt: skip
    """``spec``'s files now, with fingerprints; ``SourceError`` when the source cannot be read."""
    if spec.kind == "folder":
        return _folder(spec)
    if spec.kind == "git":
        return _git(spec, work, previous)
    return _site(spec, work, previous, fetch, progress)


def forget_folder(work: Path, spec: SourceSpec) -> None:
    """Remove what the sync folder holds for ``spec`` (its mirror and written files)."""
    shutil.rmtree(work / f"{spec.name}.git", ignore_errors=True)
    shutil.rmtree(work / spec.name, ignore_errors=True)
