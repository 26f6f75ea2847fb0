"""Walking a folder for documents: the one rule for which files a folder holds.

:func:`walk_folder` lists every file under a folder in sorted order of its relative path. It never
descends into hidden folders (``.vitepress``, ``.git``…) nor into :data:`SKIPPED_FOLDERS`, and
skips hidden files. Symbolic links: a link to a file inside the folder is read; a link to a
folder inside it is not walked (its files are read under their own paths); a link that leads
outside the folder is not followed unless ``follow_symlinks``; a broken link and a link loop are
reported. Both the knowledge base's ingest (:func:`veracity.ingest.sources.scan_sources`) and the
batch loader (:func:`veracity.parse.batch.iter_source_files`) walk with it.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

__all__ = ["SKIPPED_FOLDERS", "FolderWalk", "walk_folder"]

SKIPPED_FOLDERS: Final = frozenset({"node_modules", "__pycache__"})
"""Folders never walked besides hidden ones: dependencies and caches, not documentation."""


def _link_target(path: str) -> tuple[Path | None, str]:
    """Where a symbolic link leads, or ``None`` and why it cannot be followed."""
    try:
        return Path(path).resolve(strict=True), ""
    except RuntimeError:  # Python < 3.13 reports a loop this way
        return None, "a symbolic link loop; not followed"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, "a symbolic link loop; not followed"
        return None, f"a broken symbolic link (to {os.readlink(path)!r}); not followed"


@dataclass
class FolderWalk:
    """What walking one folder found: files ``(relative path, path)``, hidden and skipped entries
    (a folder with a trailing ``/``), links not followed ``(relative path, why)``; each sorted."""

    found: list[tuple[str, Path]] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)


def walk_folder(root: Path, *, follow_symlinks: bool = False) -> FolderWalk:
    """Every file under ``root`` (sorted by relative path), what was not walked and why."""
    walk = FolderWalk()
    real_root = root.resolve()
    visited = {real_root}
    pending: list[tuple[Path, str]] = [(root, "")]
    while pending:
        folder, prefix = pending.pop()
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
        for entry in reversed(entries):  # popped in name order
            relative = prefix + entry.name
            if entry.name.startswith(".") or (entry.name in SKIPPED_FOLDERS and entry.is_dir()):
                walk.hidden.append(relative + ("/" if entry.is_dir() else ""))
                continue
            if not entry.is_symlink():
                if entry.is_dir(follow_symlinks=False):
                    visited.add(Path(entry.path).resolve())
                    pending.append((Path(entry.path), relative + "/"))
                elif entry.is_file(follow_symlinks=False):
                    walk.found.append((relative, Path(entry.path)))
                continue
            target, problem = _link_target(entry.path)
            if target is None:
                walk.links.append((relative, problem))
            elif not follow_symlinks and not target.is_relative_to(real_root):
                walk.links.append((relative, f"links outside the ingested folder (to {str(target)!r}); "
                                             "not followed (--follow-symlinks follows it)"))  # fmt: skip
            elif target.is_dir() and (target in visited or target.is_relative_to(real_root)):
                walk.links.append((relative, f"links to a folder read already or under its own path "
                                             f"({str(target)!r}); not walked again"))  # fmt: skip
            elif target.is_dir():
                visited.add(target)
                pending.append((Path(entry.path), relative + "/"))
            else:
                walk.found.append((relative, Path(entry.path)))
    walk.found.sort()
    walk.hidden.sort()
    walk.links.sort()
    return walk
