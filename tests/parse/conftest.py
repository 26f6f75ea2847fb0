"""Fixtures for the parsing tests: governance metadata and the hand-written PDF builder.

The PDF builder (:mod:`veracity.testing.pdf_builder`, shared with the
benchmarks) writes every object and the cross-reference table itself, so the
test files have a known origin; lines listed in ``cjk=`` are set in a font
whose ``ToUnicode`` map makes Chinese text extractable without font files.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from veracity.testing.pdf_builder import build_pdf


@pytest.fixture
def pdf_bytes() -> Callable[..., bytes]:
    """The hand-written PDF builder (:func:`veracity.testing.pdf_builder.build_pdf`)."""
    return build_pdf


@pytest.fixture
def governance() -> dict[str, Any]:
    """Complete governance metadata for a public, active, official document."""
    return {
        "id": "guide",
        "revision": "1",
        "title": "Guide",
        "tenant": "acme",
        "valid_from": "2026-01-01",
        "status": "active",
        "visibility": "public",
        "trust": "official",
    }


@pytest.fixture
def write_sidecar() -> Callable[[Path, dict[str, Any]], Path]:
    """Write ``NAME.meta.yaml`` (full-name form) next to a source file."""
    import yaml

    def write(path: Path, metadata: dict[str, Any]) -> Path:
        sidecar = path.with_name(path.name + ".meta.yaml")
        sidecar.write_text(yaml.safe_dump(metadata, allow_unicode=True), encoding="utf-8")
        return sidecar

    return write


def check_parsed(parsed: Any, *, chunker_agrees: bool = True) -> None:
    """The invariants every parse keeps: normalized body, exact node offsets, chunker agreement.

    With ``chunker_agrees``, the structural chunker sees exactly the parser's
    blocks (same kinds and spans), and every chunk has its node's heading path.
    """
    from veracity.parse.chunking import block_spans, chunk_document
    from veracity.parse.documents import make_document
    from veracity.text.normalize import normalize_body

    assert normalize_body(parsed.body) == parsed.body
    previous_end = -1
    for node in parsed.nodes:
        assert parsed.body[node.start : node.end] == node.text
        assert node.text and node.text == node.text.strip()
        assert node.start > previous_end
        previous_end = node.end
    if not chunker_agrees:
        return
    expected = [(node.chunk_kind, node.start, node.end) for node in parsed.nodes if node.chunk_kind]
    assert block_spans(parsed.body) == expected
    if not parsed.body.strip():
        return
    metadata = {
        "id": "check",
        "revision": "1",
        "title": "Check",
        "tenant": "acme",
        "valid_from": "2026-01-01",
        "status": "active",
        "visibility": "public",
        "trust": "official",
    }
    document = make_document(metadata, parsed.body)
    assert document.body == parsed.body
    chunks = chunk_document(document, "structural")
    for node in parsed.nodes:
        if node.chunk_kind is None:
            continue
        holders = [c for c in chunks if c.start <= node.start < c.end]
        assert holders, node
        assert holders[0].heading_path == node.heading_path
        if node.chunk_kind.value in ("table", "code"):
            assert holders[0].start <= node.start and node.end <= holders[0].end


@pytest.fixture
def consistent() -> Callable[..., None]:
    """:func:`check_parsed` as a fixture."""
    return check_parsed
