"""Input limits and safe metadata: each bound refuses by name, with the limit, before the cost."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from veracity.index.embedders import make_embedder
from veracity.ingest.tenants import read_tenant_file
from veracity.kb.local import open_local
from veracity.model.errors import ConfigError, ValidationError
from veracity.parse.docx import parse_docx
from veracity.parse.errors import IngestError, LimitExceededError
from veracity.parse.front_matter import split_front_matter
from veracity.parse.limits import InputLimits
from veracity.parse.metadata import MetadataMap
from veracity.parse.parsers import parse_bytes
from veracity.testing.bad_inputs import alias_bomb


def test_limits_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="max_chunks"):
        InputLimits(max_chunks=0)


def test_text_over_the_limit_is_refused_before_parsing() -> None:
    expected = r"2,001 characters, over the limit of 2,000 \(max_text_chars\)"
    with pytest.raises(LimitExceededError, match=expected):
        parse_bytes(b"x" * 2001, "markdown", source="big.md", limits=InputLimits(max_text_chars=2000))


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_member_expanding_too_many_times_is_refused_while_streaming() -> None:
    data = _zip({"word/document.xml": b"a" * 8_000_000})  # ratio ~1000, under the total cap
    with pytest.raises(LimitExceededError, match=r"max_zip_ratio") as caught:
        parse_docx(data, source="bomb.docx", limits=InputLimits(max_zip_ratio=100))
    assert "bomb.docx" in str(caught.value) and "word/document.xml" in str(caught.value)


def test_an_archive_expanding_past_the_cap_is_refused() -> None:
    data = _zip({f"word/part{i}.xml": bytes(range(256)) * 8_000 for i in range(4)})  # 8 MB, ratio ~1
    with pytest.raises(LimitExceededError, match=r"max_unzipped_bytes"):
        parse_docx(data, source="big.docx", limits=InputLimits(max_unzipped_bytes=4_000_000))


@pytest.mark.parametrize("field", ["title", "facts", "allowed_roles", "id"])
def test_front_matter_with_aliases_is_refused_before_it_expands(field: str) -> None:
    with pytest.raises(ValidationError, match="anchors and aliases are not allowed"):
        split_front_matter(alias_bomb(field, levels=9), source="bomb.md")  # 9**9 values if expanded


def test_sidecar_metadata_map_and_tenant_file_refuse_aliases_too(tmp_path: Path) -> None:
    mapping = tmp_path / "map.yaml"
    mapping.write_text('base: &b {trust: community}\n"*.md": *b\n', encoding="utf-8")
    with pytest.raises(IngestError, match="alias"):
        MetadataMap.load(mapping)
    tenant = tmp_path / "tenant.yaml"
    tenant.write_text("roles: &r [public]\ntenant: acme\nmore: *r\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="anchor"):
        read_tenant_file(tenant)


def test_a_star_in_a_quoted_value_is_not_an_alias() -> None:
    metadata, _ = split_front_matter("---\ntitle: '*bold* & co'\n---\nbody\n", source="ok.md")
    assert metadata["title"] == "*bold* & co"


@pytest.mark.parametrize(
    ("front", "field"),
    [
        ("title: [a, b]", "title"),
        ("id: {x: 1}", "id"),
        ("allowed_roles: [[a]]", "allowed_roles"),
        ("facts: [quote]", "facts"),
        ("facts: [{id: f, quote: [a]}]", "facts"),
    ],
)
def test_field_shapes_are_checked_before_conversion(tmp_path: Path, front: str, field: str) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(f"---\n{front}\n---\n\n# Page\n\nText.\n", encoding="utf-8")
    with open_local(tmp_path / "kb", embedder=make_embedder("fake")) as kb:
        report = kb.ingest(tmp_path / "docs")
    ((source, reason),) = report.rejected
    assert source == "page.md" and f"field {field!r}" in reason


def test_a_document_of_too_many_chunks_is_rejected_and_the_rest_land(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "long.md").write_text("# Long\n\n" + "\n\n".join(f"Paragraph {i} " * 40 for i in range(30)))
    (docs / "short.md").write_text("# Short\n\nA short page.\n")
    with open_local(tmp_path / "kb", embedder=make_embedder("fake")) as kb:
        report = kb.ingest(docs, limits=InputLimits(max_chunks=5))
    assert report.added == ("short",)
    ((source, reason),) = report.rejected
    assert source == "long.md" and "chunks, over the limit of 5 (max_chunks)" in reason
