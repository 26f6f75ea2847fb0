"""Markdown with YAML front matter carrying governance metadata and facts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..model.contracts import Document
from ..model.errors import ValidationError
from .documents import make_document
from .site_markup import clean_site_markup
from .yaml_text import load_yaml, yaml_problem

_FENCE = "---"


def split_front_matter(text: str, *, source: str = "<text>") -> tuple[dict[str, Any], str]:
    """Return ``(metadata, body)``; a file without front matter has empty metadata."""
    text = text.lstrip("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].strip() != _FENCE:
        return {}, text
    for index in range(1, len(lines)):
        if lines[index].strip() == _FENCE:
            header = "\n".join(lines[1:index])
            body = "\n".join(lines[index + 1 :])
            try:
                metadata = load_yaml(header, source=source, what="front matter", keep_number_text=True) or {}
            except yaml.YAMLError as exc:
                raise ValidationError(  # the block starts on the file's second line
                    f"front matter is not valid YAML: {yaml_problem(exc, first_line=2)}", document=source
                ) from None
            if not isinstance(metadata, dict):
                raise ValidationError("front matter must be a mapping", document=source)
            return metadata, body
    raise ValidationError("front matter opened with '---' but never closed", document=source)


def load_markdown_text(
    text: str, *, source: str = "<text>", defaults: dict[str, Any] | None = None
) -> Document:
    """Parse one Markdown text into a validated ``Document`` (doc-site markup cleaned, as ingest does)."""
    metadata, body = split_front_matter(text, source=source)
    body = clean_site_markup(body)
    merged = {**(defaults or {}), **metadata}
    if "id" not in merged:
        raise ValidationError("required field is missing", document=source, field="id")
    return make_document(merged, body)


def load_markdown_file(path: Path, *, defaults: dict[str, Any] | None = None) -> Document:
    """Read and parse one Markdown file."""
    return load_markdown_text(path.read_text(encoding="utf-8"), source=str(path), defaults=defaults)


@dataclass(frozen=True, slots=True)
class LoadReport:
    """Documents that loaded, and each rejected source with its reason."""

    documents: tuple[Document, ...]
    rejected: tuple[tuple[str, str], ...]


def load_markdown_batch(sources: Iterable[tuple[str, str]]) -> LoadReport:
    """Load ``(source name, text)`` pairs; a bad document is rejected whole, the rest load."""
    documents: list[Document] = []
    rejected: list[tuple[str, str]] = []
    for source, text in sources:
        try:
            documents.append(load_markdown_text(text, source=source))
        except ValidationError as exc:
            rejected.append((source, str(exc)))
    return LoadReport(documents=tuple(documents), rejected=tuple(rejected))
