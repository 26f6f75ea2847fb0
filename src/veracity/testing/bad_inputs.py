"""Bad source folders, one per way a file can hurt an ingest, each beside good files.

Every case writes a folder holding :data:`GOOD_FILES` ordinary Markdown
files and the bad thing; an ingest must reject or report the bad thing by
name, in bounded time and memory, and still add the good files. The tests
use small sizes; ``benchmarks/bench_bad_inputs.py`` the sizes of the report
that found them (a 49 MB single line, a 1 MB DOCX expanding to 885 MB,
HTML nested 100,000 deep).

Cases (:data:`CASES`): YAML alias bombs in ``title``, ``facts``,
``allowed_roles`` and ``id``; a single-line text file; a DOCX zip bomb;
deeply nested HTML; a symbolic link to a file outside the folder; a link
that points at itself; an empty folder; names with a newline, a
right-to-left override and ``../..``.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["CASES", "GOOD_FILES", "BadSizes", "alias_bomb", "write_case"]

GOOD_FILES: Final = 2


@dataclass(frozen=True, slots=True)
class BadSizes:
    """How big each bad thing is (the defaults are small, for tests)."""

    alias_levels: int = 6
    single_line_bytes: int = 5_000_000
    docx_expanded_bytes: int = 150_000_000
    html_depth: int = 20_000


def alias_bomb(field: str, levels: int) -> str:
    """Front matter whose ``field`` expands to 9**levels values through nested anchors (~1 KB)."""
    lines = ["---", 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels):
        refs = ",".join([f"*l{level - 1}"] * 9)
        lines.append(f"l{level}: &l{level} [{refs}]")
    top = f"*l{levels - 1}"
    value = {
        "title": top,
        "facts": f"[{{id: bomb, quote: {top}}}]",
        "allowed_roles": top,
        "id": top,
    }[field]
    lines += [f"{field}: {value}", "visibility: internal" if field == "allowed_roles" else "", "---", ""]
    return "\n".join(line for line in lines if line) + "\n\n# Bomb\n\nThe bomb page has a body too.\n"


def _good(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(GOOD_FILES):
        (folder / f"good{i}.md").write_text(
            f"# Good page {i}\n\nThe good page {i} says the backup window is {i + 1} hours.\n",
            encoding="utf-8",
        )


def _docx_bomb(expanded: int) -> bytes:
    """A zip shaped like a DOCX whose document part expands to ``expanded`` bytes of one letter."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            block = b"a" * (1 << 20)
            for _ in range(expanded // len(block)):
                part.write(block)
    return buffer.getvalue()


def _single_line(folder: Path, sizes: BadSizes) -> str:
    words = b"lorem ipsum dolor sit amet " * (sizes.single_line_bytes // 27 + 1)
    (folder / "one-line.txt").write_bytes(words[: sizes.single_line_bytes])
    return "one-line.txt"


def _docx(folder: Path, sizes: BadSizes) -> str:
    (folder / "bomb.docx").write_bytes(_docx_bomb(sizes.docx_expanded_bytes))
    return "bomb.docx"


def _html(folder: Path, sizes: BadSizes) -> str:
    depth = sizes.html_depth
    page = "<html><body>" + "<div>" * depth + "deep text at the bottom" + "</div>" * depth + "</body></html>"
    (folder / "deep.html").write_text(page, encoding="utf-8")
    return "deep.html"


def _outside(folder: Path, sizes: BadSizes) -> str:
    secret = folder.parent / f"{folder.name}-outside.md"
    secret.write_text("# Outside\n\nA file outside the ingested folder.\n", encoding="utf-8")
    os.symlink(secret, folder / "outside-link.md")
    return "outside-link.md"


def _loop(folder: Path, sizes: BadSizes) -> str:
    os.symlink("loop.md", folder / "loop.md")
    return "loop.md"


def _empty(folder: Path, sizes: BadSizes) -> str:
    (folder.parent / f"{folder.name}-empty").mkdir()
    return f"{folder.name}-empty"


def _names(folder: Path, sizes: BadSizes) -> str:
    (folder / "two\nlines.md").write_text("# Two lines\n\nA name with a newline.\n", encoding="utf-8")
    (folder / "report\u202etxt.md").write_text("# Override\n\nA name with U+202E.\n", encoding="utf-8")
    (folder / "dotdot.md").write_text(
        "---\nid: ../../etc/passwd\n---\n\n# Dots\n\nAn id that looks like a path upwards.\n",
        encoding="utf-8",
    )
    return "two\nlines.md"


def _bomb(field: str) -> Callable[[Path, BadSizes], str]:
    def write(folder: Path, sizes: BadSizes) -> str:
        (folder / f"bomb-{field}.md").write_text(alias_bomb(field, sizes.alias_levels), encoding="utf-8")
        return f"bomb-{field}.md"

    return write


CASES: Final[dict[str, Callable[[Path, BadSizes], str]]] = {
    "yaml alias bomb in title": _bomb("title"),
    "yaml alias bomb in facts": _bomb("facts"),
    "yaml alias bomb in allowed_roles": _bomb("allowed_roles"),
    "yaml alias bomb in id": _bomb("id"),
    "single-line text file": _single_line,
    "docx zip bomb": _docx,
    "deeply nested html": _html,
    "symlink to a file outside": _outside,
    "self-looping symlink": _loop,
    "empty folder": _empty,
    "names with newline, U+202E, ../..": _names,
}
"""Case name → writer of the bad thing into a folder (returns the bad file's name in it)."""


def write_case(root: Path, name: str, sizes: BadSizes = BadSizes()) -> tuple[list[Path], str]:
    """Case ``name`` under ``root``: the paths to ingest together and the bad file's name.

    The paths are a folder with the good files and the bad thing; for the
    empty-folder case, a folder with the good files and the empty folder beside it.
    """
    folder = root / name.replace(" ", "-").replace(",", "").replace("/", "").replace(".", "")
    _good(folder)
    bad = CASES[name](folder, sizes)
    paths = [folder, folder.parent / bad] if name == "empty folder" else [folder]
    return paths, bad
