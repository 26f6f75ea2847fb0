"""reStructuredText (Sphinx) to Markdown, the common subset, then the Markdown parser.

Enough for the prose of a Sphinx documentation folder, not a full docutils:

- section titles (a line underlined, optionally overlined, with ``= - ~ ^ " ' * + #``…)
  become ``#`` headings, levels in the order the underline styles first appear;
- admonition directives (``.. note::``, ``.. warning:: Title``, ``.. admonition:: Title``)
  keep their title and their dedented body; ``.. code-block:: lang`` / ``.. code::``
  / ``.. sourcecode::`` and ``::`` literal blocks become fenced code;
- directives that carry no prose for a reader (``toctree``, ``image``, ``figure``,
  ``include``, ``automodule``, ``raw``, ``only``…), their options and bodies,
  comments, link targets and substitution definitions are dropped;
- inline roles keep their text (``:ref:`Title <target>``` → ``Title``,
  ``:code:`x``` → ```x```), ````literal```` becomes ```literal```, and
  ```text <url>`_`` becomes ``[text](url)``.

Field lists at the very top (``:orphan:``, ``:title: …``) are read as metadata.
Grid and simple tables stay as text lines (their words are searchable; their
layout is not).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from .markdown import parse_markdown
from .nodes import ParsedSource

__all__ = ["parse_rst", "rst_to_markdown"]

_ADORNMENT: Final = re.compile(r"^([=\-~^\"'`*+#:.<>_])\1{2,}\s*$")
_DIRECTIVE: Final = re.compile(r"^(\s*)\.\.\s+([\w:-]+)::\s*(.*)$")
_COMMENT: Final = re.compile(r"^(\s*)\.\.(?:\s|$)")
_FIELD: Final = re.compile(r"^:([\w-]+):\s*(.*)$")
_ADMONITIONS: Final = frozenset(
    "note warning tip hint important caution danger error attention seealso admonition "
    "versionadded versionchanged deprecated todo topic sidebar rubric".split()
)
_CODE: Final = frozenset({"code-block", "code", "sourcecode", "literalinclude-text"})
_ROLE: Final = re.compile(r":[\w:-]+:`([^`<]*?)(?:\s*<[^`>]*>)?`")
_LINK: Final = re.compile(r"`([^`<]+?)\s*<([^`>]+)>`__?")
_LITERAL: Final = re.compile(r"``(.+?)``")
_REFERENCE: Final = re.compile(r"`([^`]+)`_")
_BLANK_RUNS: Final = re.compile(r"\n{3,}")


def _inline(text: str) -> str:
    text = _LINK.sub(lambda m: f"[{m.group(1)}]({m.group(2)})", text)
    text = _ROLE.sub(lambda m: f"`{m.group(1)}`" if m.group(0).startswith(":code:") else m.group(1), text)
    text = _LITERAL.sub(lambda m: f"`{m.group(1)}`", text)
    return _REFERENCE.sub(lambda m: m.group(1), text)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _body(lines: Sequence[str], first: int, floor: int) -> tuple[list[str], int]:
    """The block indented deeper than ``floor`` from ``first`` on, dedented; the index after it."""
    index = first
    block: list[str] = []
    while index < len(lines) and (not lines[index].strip() or _indent(lines[index]) > floor):
        block.append(lines[index])
        index += 1
    while block and not block[-1].strip():
        block.pop()
        index -= 1
    depth = min((_indent(line) for line in block if line.strip()), default=0)
    return _trimmed([line[depth:] for line in block]), index


def _trimmed(lines: list[str]) -> list[str]:
    """``lines`` without blank lines at the start."""
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    return lines[first:]


def _skip_options(lines: list[str]) -> list[str]:
    """A directive body without its leading ``:option: value`` lines."""
    index = 0
    while index < len(lines) and _FIELD.match(lines[index].strip()):
        index += 1
    return _trimmed(lines[index:])


def rst_to_markdown(text: str) -> tuple[str, dict[str, Any]]:
    """``(markdown, metadata)`` of a reStructuredText text; see the module docstring."""
    lines = text.replace("\t", "    ").split("\n")
    metadata: dict[str, Any] = {}
    index = 0
    while index < len(lines) and (_FIELD.match(lines[index]) or not lines[index].strip()):
        field = _FIELD.match(lines[index])
        if field:
            metadata[field.group(1)] = field.group(2).strip() or True
        index += 1
    return _BLANK_RUNS.sub("\n\n", "\n".join(_convert(lines[index:], {}))).strip() + "\n", metadata


def _convert(lines: Sequence[str], levels: dict[str, int]) -> list[str]:
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        nxt = lines[index + 1] if index + 1 < len(lines) else ""
        over = _ADORNMENT.match(line)
        closed = index + 2 < len(lines) and _ADORNMENT.match(lines[index + 2])
        if over and closed and lines[index + 1].strip():
            style = "over" + over.group(1)
            out += [f"{'#' * levels.setdefault(style, min(len(levels) + 1, 6))} {_inline(nxt.strip())}", ""]
            index += 3
            continue
        under = _ADORNMENT.match(nxt)
        if line.strip() and not _indent(line) and under and len(nxt.strip()) >= len(line.strip()):
            style = under.group(1)
            out += [f"{'#' * levels.setdefault(style, min(len(levels) + 1, 6))} {_inline(line.strip())}", ""]
            index += 2
            continue
        directive = _DIRECTIVE.match(line)
        if directive:
            name, argument = directive.group(2).lower(), directive.group(3).strip()
            body, index = _body(lines, index + 1, _indent(line))
            body = _skip_options(body)
            if name in _CODE:
                out += [f"```{argument.split()[0] if argument else ''}", *body, "```", ""]
            elif name in _ADMONITIONS:
                title = argument if name in ("admonition", "topic", "sidebar", "rubric") or argument else ""
                out += ([_inline(title), ""] if title else []) + _convert(body, levels) + [""]
            continue
        if _COMMENT.match(line):
            _, index = _body(lines, index + 1, _indent(line))
            continue
        if line.rstrip().endswith("::") and not line.strip().startswith(".."):
            head = line.rstrip()[:-2].rstrip()
            body, after = _body(lines, index + 1, _indent(line))
            if head:
                out.append(_inline(head + (":" if not head.endswith(":") else "")))
            if any(entry.strip() for entry in body):
                out += ["", "```", *[entry for entry in body if entry.strip() or body], "```", ""]
            index = after
            continue
        out.append(_inline(line))
        index += 1
    return out


def parse_rst(text: str, *, source: str = "<text>") -> ParsedSource:
    """Parse reStructuredText into a :class:`ParsedSource` (through its Markdown form)."""
    markdown, metadata = rst_to_markdown(text)
    parsed = parse_markdown(markdown, source=source)
    title = metadata.get("title") if isinstance(metadata.get("title"), str) else parsed.title
    return ParsedSource(parsed.body, parsed.nodes, title, {**metadata, **parsed.metadata}, "rst")
