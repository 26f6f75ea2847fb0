"""A git source: a mirror of the repository, its tree at a commit, and the files that changed.

The repository (a URL or a local path, whatever the ``git`` program can clone) is mirrored
once into the sync folder (``git clone --mirror``) and fetched on every later sync. The tree
at the wanted commit is listed with its blob ids: a blob id is the file's fingerprint, so
what changed between the recorded commit and the new one is exactly the paths whose blob id
differs, found without reading any file. Only those blobs are written out (one ``git
cat-file --batch`` for all of them) into the folder the knowledge base ingests from.

The ``git`` program runs with prompts off (a source that needs credentials fails instead of
waiting) and a time limit; a failure is a :class:`GitError` carrying git's own message.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

__all__ = ["GitError", "GitTree", "list_tree", "mirror", "resolve_commit", "write_blobs"]

TIMEOUT_S: Final = 600.0
"""A clone or fetch that takes longer is stopped (a hung remote must not hang the sync)."""
_ENV: Final = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C"}


class GitError(RuntimeError):
    """The ``git`` program failed, or is missing; the message says which command and why."""


@dataclass(frozen=True, slots=True)
class GitTree:
    """The files of a repository's tree at ``commit`` (under ``folder``): path → blob id.

    Paths are relative to ``folder`` (POSIX). ``skipped`` names what is not a plain file
    (symbolic links, submodules) with the reason.
    """

    commit: str
    files: Mapping[str, str]
    skipped: tuple[tuple[str, str], ...] = ()


def _git(
    *args: str, cwd: Path | None = None, stdin: bytes | None = None, timeout: float = TIMEOUT_S
) -> bytes:
    program = shutil.which("git")
    if program is None:
        raise GitError("the git program is not installed (a git source needs it on PATH)")
    try:
        done = subprocess.run(
            [program, *args], cwd=cwd, input=stdin, capture_output=True, timeout=timeout,
            env={**os.environ, **_ENV}, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {timeout:.0f} s; stopped") from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        command = next(arg for arg in args if not arg.startswith("-") and "/" not in arg)
        raise GitError(f"git {command} failed: {' / '.join(lines[:2]) or f'exit {done.returncode}'}")
    return done.stdout


def mirror(location: str, cache: Path) -> None:
    """Bring the mirror of ``location`` in ``cache`` up to date (clone it the first time)."""
    if (cache / "HEAD").is_file():
        _git("--git-dir", str(cache), "remote", "set-url", "origin", location)
        _git("--git-dir", str(cache), "fetch", "--prune", "--quiet", "origin")
        return
    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_name(cache.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    _git("clone", "--mirror", "--quiet", location, str(partial))
    partial.rename(cache)  # a clone stopped halfway never looks like a mirror


def resolve_commit(cache: Path, ref: str | None) -> str:
    """The commit ``ref`` names in the mirror (a branch, tag or commit; ``None``: its HEAD)."""
    wanted = f"{ref or 'HEAD'}^{{commit}}"
    try:
        return _git("--git-dir", str(cache), "rev-parse", "--verify", "--quiet", wanted).decode().strip()
    except GitError:
        raise GitError(f"the repository has no branch, tag or commit {ref or 'HEAD'!r}") from None


def list_tree(cache: Path, commit: str, folder: str | None = None) -> GitTree:
    """Every file of ``commit``'s tree under ``folder`` with its blob id (nothing is read)."""
    prefix = PurePosixPath(folder.strip("/")).as_posix() + "/" if folder and folder.strip("/") else ""
    out = _git(
        "--git-dir", str(cache), "ls-tree", "-r", "-z", "--full-tree", commit, *([prefix] if prefix else [])
    )
    files: dict[str, str] = {}
    skipped: list[tuple[str, str]] = []
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        mode, kind, blob = meta.decode().split()
        path = raw_path.decode("utf-8", "surrogateescape")
        if not path.startswith(prefix):
            continue
        relative = path[len(prefix) :]
        if kind != "blob":
            skipped.append((relative, f"a {kind} (submodule); not read"))
        elif mode == "120000":
            skipped.append((relative, "a symbolic link; not followed"))
        else:
            files[relative] = blob
    return GitTree(commit, dict(sorted(files.items())), tuple(sorted(skipped)))


def write_blobs(cache: Path, blobs: Mapping[str, str], target: Path) -> None:
    """Write each ``path → blob id`` under ``target`` (parents made), read in one batch."""
    if not blobs:
        return
    order = sorted(blobs.items())
    unique = list(dict.fromkeys(blob for _, blob in order))
    out = _git(
        "--git-dir", str(cache), "cat-file", "--batch", stdin="".join(f"{b}\n" for b in unique).encode()
    )
    contents: dict[str, bytes] = {}
    at = 0
    for blob in unique:
        end = out.index(b"\n", at)
        header = out[at:end].decode().split()
        if len(header) != 3 or header[0] != blob:
            raise GitError(f"git cat-file gave {out[at:end]!r} for blob {blob}")
        size = int(header[2])
        contents[blob] = out[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    root = target.resolve()
    for path, blob in order:
        destination = (target / path).resolve()
        if not destination.is_relative_to(root):  # git refuses such paths; never write outside
            raise GitError(f"the path {path!r} leads outside the source folder")
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(contents[blob])
