"""Documentation-site markup in Markdown sources, cleaned to plain CommonMark before parsing.

Site generators extend Markdown with syntax that renders as boxes, tabs and
widgets but reads as noise in a chunk or a citation. :func:`clean_site_markup`
rewrites it line by line, keeping every word of content:

- MkDocs (Material, pymdown): admonitions ``!!! note "Title"``, collapsible
  ``??? tip`` / ``???+ info`` and content tabs ``=== "Tab"``: the marker line
  becomes its title (if any) and the 4-space-indented body is dedented, so
  CommonMark does not read it as code. Snippet includes ``--8<-- "file"``
  (line and block form, in code too) are dropped; attribute lists
  (``{ #id .class key=value }``, ``{: .class }``) and icon shortcodes
  (``:material-check:``) are removed.
- VitePress, Docusaurus, MyST: ``:::`` containers (``::: tip Title``,
  ``:::note[Title]``, ``:::{note}``, nested ``::::``) lose their fences and
  keep their content and custom title; heading anchors ``{#id}`` go;
  ```` ```{directive} ```` fences become their content.
- mkdocstrings / mkautodoc: ``::: package.module.Name`` and its indented
  options (``:docstring:``, ``options:``) are dropped: the site renders API
  documentation from the code there, and the source holds none of it.
- HTML, Vue and JSX inside Markdown: ``<script>``, ``<style>`` and
  ``<template>`` blocks and HTML comments are dropped whole; other tags
  (``<Badge …/>``, ``<Tabs>``, ``<div class=…>``) are removed and the text
  between them stays; MDX ``import``/``export`` lines and ``{/* … */}``
  comments are dropped, as are template expressions (``{{ … }}``, ``{% … %}``).

Fenced code is copied as it is (only dedented with its container). Removed
lines leave a blank line, so the paragraphs around them stay apart.
:func:`looks_like_template` tells an HTML page template from a document.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

__all__ = ["clean_inline_markup", "clean_site_markup", "looks_like_template"]

_FENCE: Final = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
_ADMONITION: Final = re.compile(
    r"^(?P<indent>\s*)(?:!!!|\?\?\?\+?)[ \t]*[\w-]*(?:[ \t]+[\w-]+)*(?:[ \t]+\"(?P<title>[^\"]*)\")?\s*$"
)
_TAB: Final = re.compile(r"^(?P<indent>\s*)===!?\+?[ \t]+\"(?P<title>[^\"]*)\"\s*$")
_SNIPPET: Final = re.compile(r"^\s*;?--8<--")
_CONTAINER: Final = re.compile(r"^\s*(:{3,})\s*(.*?)\s*$")
_AUTODOC: Final = re.compile(r"^(?P<indent>\s*):::[ \t]+[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+\s*$")
_CONTAINER_TITLE: Final = re.compile(
    r"^\{?[\w-]+\}?(?:\[(?P<bracket>.*)\]|\s+(?P<rest>.*?))?(?:\s*\{[\w\s=-]*\})?$"
)
_RAW_BLOCK: Final = re.compile(r"^\s*<(script|style|template)\b", re.IGNORECASE)
_COMMENT_OPEN: Final = re.compile(r"^\s*<!--")
_MDX_IMPORT: Final = re.compile(r"^import\s+(?:[\w*{}\s,]+\s+from\s+)?['\"][^'\"]+['\"];?\s*$")
_MDX_IMPORT_START: Final = re.compile(r"^import\s+\{[^}]*$")
_MDX_EXPORT: Final = re.compile(r"^export\s+(?:default\b|const\b|let\b|var\b|function\b|\{)")
_MDX_COMMENT: Final = re.compile(r"^\s*\{/\*.*\*/\}\s*$")
_INCLUDE: Final = re.compile(r"^\s*(?:\{\*[^{}]*\*\}|\{![^{}]*!\})\s*$")
_TAG_LINE: Final = re.compile(r"^\s*</?[A-Za-z][\w.:-]*(?=[\s/>]|$)")
_TAG: Final = re.compile(r"</?[A-Za-z][\w.:-]*(?:\s[^<>]*?)?/?>")
_COMMENT: Final = re.compile(r"<!--.*?-->")
_ATTRIBUTE: Final = r"(?:[#.][\w:-]+|[\w:-]+=(?:\"[^\"]*\"|'[^']*'|[^\s}]*))"
_ATTRIBUTE_LIST: Final = re.compile(
    r"[ \t]*\{:?[ \t]*" + _ATTRIBUTE + r"(?:[ \t]+" + _ATTRIBUTE + r")*[ \t]*\}"
)
_EMPTY_ATTRIBUTE_LIST: Final = re.compile(r"^\s*\{:\s*\}\s*$")
_ICON: Final = re.compile(r":(?:material|fontawesome|octicons|simple|fa|octicon)-[\w-]+:")
_TEMPLATE_EXPRESSION: Final = re.compile(r"\{\{.*?\}\}|\{%.*?%\}")
_CODE_SPAN: Final = re.compile(r"(`+)(.+?)\1")
_INDENT_STEP: Final = 4


def _fence_end(lines: Sequence[str], first: int, marker: str) -> int:
    """Index of the line closing the fence opened at ``first`` (the last line if unclosed)."""
    for index in range(first + 1, len(lines)):
        candidate = lines[index].strip()
        if len(candidate) >= len(marker) and candidate == marker[0] * len(candidate):
            return index
    return len(lines) - 1


def _indented_body(lines: Sequence[str], first: int, indent: int) -> tuple[list[str], int]:
    """Lines from ``first`` indented by at least ``indent`` (blank lines inside too), dedented."""
    body: list[str] = []
    index = first
    while index < len(lines):
        line = lines[index].expandtabs(_INDENT_STEP)
        if line.strip() and len(line) - len(line.lstrip(" ")) < indent:
            break
        body.append(line[indent:] if line.strip() else "")
        index += 1
    while body and not body[-1].strip():
        body.pop()
        index -= 1
    return body, index


def _until(lines: Sequence[str], first: int, pattern: re.Pattern[str]) -> int:
    """Index of the first line from ``first`` on that matches ``pattern`` (the last line if none)."""
    for index in range(first, len(lines)):
        if pattern.search(lines[index]):
            return index
    return len(lines) - 1


def _container_title(rest: str) -> str:
    """The custom title of a ``:::`` container opener (``tip Title``, ``tip[Title]``, ``{note}``)."""
    match = _CONTAINER_TITLE.match(rest)
    if match is None:
        return rest
    return (match.group("bracket") or match.group("rest") or "").strip()


def clean_inline_markup(line: str) -> str:
    """Remove attribute lists, anchors, inline tags, comments, icons and template expressions.

    Text inside code spans is left alone.
    """
    parts: list[str] = []
    position = 0
    for span in _CODE_SPAN.finditer(line):
        parts.append(_clean_text(line[position : span.start()]))
        parts.append(span.group(0))
        position = span.end()
    parts.append(_clean_text(line[position:]))
    return "".join(parts).rstrip()


_GAP: Final = re.compile(r"(?<=\S)[ \t]{2,}")


def _clean_text(text: str) -> str:
    if "<" not in text and "{" not in text and ":" not in text:
        return text  # every pattern below needs one of these (most lines of prose have none)
    cleaned = _COMMENT.sub("", text)
    cleaned = _ATTRIBUTE_LIST.sub("", cleaned)
    cleaned = _TAG.sub("", cleaned)
    cleaned = _ICON.sub("", cleaned)
    cleaned = _TEMPLATE_EXPRESSION.sub("", cleaned)
    return text if cleaned == text else _GAP.sub(" ", cleaned)  # close the gaps removals left


def _code_block(lines: Sequence[str], first: int, marker: str) -> tuple[list[str], int]:
    """A fenced code block as it is, without snippet-include lines; nothing if that leaves it empty."""
    last = _fence_end(lines, first, marker)
    inner = [line for line in lines[first + 1 : last] if not _SNIPPET.match(line)]
    if not any(line.strip() for line in inner):
        return [""], last + 1
    closing = [lines[last]] if last > first else []
    return [lines[first], *inner, *closing], last + 1


def _titled(indent: str, title: str, body: list[str]) -> list[str]:
    """A container's title on a line of its own, a blank line, then its cleaned body."""
    head = [indent + clean_inline_markup(title).strip(), ""] if title.strip() else [""]
    return [*head, *(indent + line if line.strip() else "" for line in _clean_lines(body)), ""]


_MARKUP_STARTS: Final = frozenset("`~!?=;-:<{")
"""First characters (after indentation) of every line-level pattern in :func:`_clean_lines` but the
MDX ``import``/``export`` lines, which start at the margin: a line that opens with none of them is
prose, and only its inline markup is cleaned (most lines of a document)."""


def _clean_lines(lines: Sequence[str]) -> list[str]:
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index].expandtabs(_INDENT_STEP)
        if line.lstrip()[:1] not in _MARKUP_STARTS and not line.startswith(("import", "export")):
            out.append(clean_inline_markup(line))
            index += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            info = fence.group(3).strip()
            if info.startswith("{") and "}" in info:  # a MyST directive: its content is text
                last = _fence_end(lines, index, fence.group(2))
                title = info[info.index("}") + 1 :]
                body = [entry for entry in lines[index + 1 : last] if not entry.lstrip().startswith(":")]
                out.extend(_titled(fence.group(1), title, body))
                index = last + 1
                continue
            block, index = _code_block(lines, index, fence.group(2))
            out.extend(block)
            continue
        marker = _ADMONITION.match(line) or _TAB.match(line)
        if marker:
            indent = marker.group("indent")
            body, index = _indented_body(lines, index + 1, len(indent) + _INDENT_STEP)
            out.extend(_titled(indent, marker.group("title") or "", body))
            continue
        if _SNIPPET.match(line):
            listing = line.strip() in ("--8<--", ";--8<--")  # a block of file names up to the next marker
            index = _until(lines, index + 1, _SNIPPET) + 1 if listing else index + 1
            out.append("")
            continue
        autodoc = _AUTODOC.match(line)
        if autodoc:  # a placeholder for API docs generated from the code: no text of its own here
            _, index = _indented_body(lines, index + 1, len(autodoc.group("indent")) + 1)
            out.append("")
            continue
        container = _CONTAINER.match(line)
        if container:
            title = _container_title(container.group(2)) if container.group(2) else ""
            out.extend([clean_inline_markup(title).strip(), ""] if title else [""])
            index += 1
            continue
        raw = _RAW_BLOCK.match(line)
        if raw:
            index = _until(lines, index, re.compile(rf"</{raw.group(1)}\s*>", re.IGNORECASE)) + 1
            out.append("")
            continue
        if _COMMENT_OPEN.match(line) and "-->" not in line:
            index = _until(lines, index, re.compile(r"-->")) + 1
            out.append("")
            continue
        if (
            _MDX_IMPORT.match(line)
            or _MDX_COMMENT.match(line)
            or _INCLUDE.match(line)  # markdown-include's {!file!} and its {* file hl[3] *} variant
            or _EMPTY_ATTRIBUTE_LIST.match(line)
        ):
            out.append("")
            index += 1
            continue
        if _MDX_IMPORT_START.match(line):
            index = _until(lines, index, re.compile(r"\}\s*from\s+['\"]")) + 1
            out.append("")
            continue
        if _MDX_EXPORT.match(line):
            index = _statement_end(lines, index) + 1
            out.append("")
            continue
        if _TAG_LINE.match(line):
            last = index if ">" in line else _until(lines, index, re.compile(">"))
            joined = " ".join(entry.strip() for entry in lines[index : last + 1])
            text = clean_inline_markup(joined).strip()
            indent = line[: len(line) - len(line.lstrip())]
            out.append(indent + text if text else "")
            index = last + 1
            continue
        out.append(clean_inline_markup(line))
        index += 1
    return out


def _statement_end(lines: Sequence[str], first: int) -> int:
    """The last line of a JavaScript statement starting at ``first`` (braces and brackets balanced)."""
    depth = 0
    for index in range(first, len(lines)):
        depth += sum(lines[index].count(c) for c in "{[(") - sum(lines[index].count(c) for c in "}])")
        if depth <= 0:
            return index
    return len(lines) - 1


_BLANK_RUNS: Final = re.compile(r"\n{3,}")


def clean_site_markup(text: str) -> str:
    """``text`` (Markdown after its front matter) without doc-site markup; see the module docstring."""
    cleaned = "\n".join(_clean_lines(text.split("\n")))
    return _BLANK_RUNS.sub("\n\n", cleaned)


_TEMPLATE_STATEMENT: Final = re.compile(
    r"\{%-?\s*(?:extends|block|endblock|include|import|from|macro|if|for|set|raw)\b"
)
_CODE_ELEMENT: Final = re.compile(r"<(pre|code)\b.*?</\1>", re.IGNORECASE | re.DOTALL)


def looks_like_template(html: str) -> bool:
    """Whether an HTML file is a page template (Jinja/Liquid/Nunjucks statements outside code)."""
    return bool(_TEMPLATE_STATEMENT.search(_CODE_ELEMENT.sub("", html)))
