"""Governance values as their authors wrote them: unquoted versions, role lists in one text,
moments at the edge of the calendar, and --metadata keys that match no file."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import pytest
import yaml

from veracity.index.embedders import FakeEmbedder
from veracity.ingest.run import ingest_paths
from veracity.kb.directory import create_kb
from veracity.model.errors import ValidationError
from veracity.model.versions import in_range
from veracity.parse import yaml_text
from veracity.parse.batch import load_sources
from veracity.parse.documents import parse_moment
from veracity.parse.errors import IngestError
from veracity.parse.front_matter import load_markdown_text
from veracity.parse.metadata import MetadataMap
from veracity.parse.yaml_text import load_yaml, written_text

GOVERNANCE = (
    "revision: '1'\ntenant: acme\nvalid_from: 2026-01-01\n"
    "status: active\nvisibility: public\ntrust: official\n"
)


def _markdown(fields: str, body: str = "正文内容。", *, id: str = "guide") -> str:
    return f"---\nid: {id}\ntitle: Guide\n{GOVERNANCE}{fields}---\n\n{body}\n"


# -- unquoted versions -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "version"),
    [("3.10", "3.10"), ("3.2", "3.2"), ("3", "3"), ('"3.10"', "3.10"), ("3.10.1", "3.10.1"), ("2.0", "2.0")],
)
def test_front_matter_version_is_the_text_written(written: str, version: str) -> None:
    document = load_markdown_text(_markdown(f"version_min: {written}\nversion_max: {written}\n"))
    assert (document.version_min, document.version_max) == (version, version)


def test_unquoted_3_10_is_not_served_to_3_2_askers() -> None:
    document = load_markdown_text(_markdown("version_min: 3.10\n"))
    assert not in_range("3.2", document.version_min, document.version_max)
    assert in_range("3.10", document.version_min, document.version_max)


def test_unquoted_3_10_is_not_reversed_against_3_9() -> None:
    document = load_markdown_text(_markdown("version_min: 3.9\nversion_max: 3.10\n"))
    assert (document.version_min, document.version_max) == ("3.9", "3.10")


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_sidecar_and_mapping_versions_are_the_text_written(tmp_path: Path, suffix: str) -> None:
    (tmp_path / "a.txt").write_text("甲的内容。", encoding="utf-8")
    (tmp_path / "b.txt").write_text("乙的内容。", encoding="utf-8")
    (tmp_path / "b.meta.yaml").write_text("version_min: 3.10\n", encoding="utf-8")
    mapping = tmp_path.parent / f"map{suffix}"
    entry = '{"valid_from": "2026-01-01", "status": "active", "visibility": "public", "trust": "official"'
    mapping.write_text(f'{{"*.txt": {entry}, "version_max": 4.10}}}}', encoding="utf-8")
    result = load_sources([tmp_path], tenant="acme", metadata_file=mapping)
    versions = {path.name: (doc.version_min, doc.version_max) for path, doc in result.documents}
    assert versions == {"a.txt": (None, "4.10"), "b.txt": ("3.10", "4.10")}


def test_other_numbers_are_the_numbers_they_were() -> None:
    document = load_markdown_text(_markdown("weight: 3.10\ncount: 010\n"))
    assert dict(document.extra_metadata) == {"count": "8", "weight": "3.1"}


def test_numbers_keep_their_text_through_pickling_and_copies() -> None:
    loaded = load_yaml("v: 3.10\nn: 010\n", source="x", what="front matter", keep_number_text=True)
    assert loaded == {"v": 3.1, "n": 8}
    for again in (pickle.loads(pickle.dumps(loaded)), copy.deepcopy(loaded)):
        assert {key: written_text(value) for key, value in again.items()} == {"v": "3.10", "n": "010"}
    assert json.dumps(loaded) == '{"v": 3.1, "n": 8}'


def test_plain_loading_gives_plain_numbers() -> None:
    loaded = load_yaml("v: 3.10\n", source="x", what="tenant file")
    assert type(loaded["v"]) is float


@pytest.mark.parametrize("text", ["a: &x 3.10\nb: *x\n", "a: &x {v: 1}\nb: {<<: *x}\n"])
def test_anchors_and_aliases_are_still_refused(text: str) -> None:
    with pytest.raises(IngestError, match="anchor"):
        load_yaml(text, source="x", what="front matter", keep_number_text=True)


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="libyaml is not installed")
def test_numbers_with_text_are_still_parsed_by_libyaml() -> None:
    assert issubclass(yaml_text._NumberTextLoader, yaml.CSafeLoader)


# -- allowed_roles in one text ------------------------------------------------------------------


def test_roles_in_one_text_are_split_at_commas_like_the_html_meta_tag() -> None:
    document = load_markdown_text(
        _markdown('allowed_roles: "support, public"\n').replace("visibility: public", "visibility: internal")
    )
    assert document.allowed_roles == ("public", "support")


def test_one_role_in_one_text_is_that_role() -> None:
    assert load_markdown_text(_markdown("allowed_roles: support\n")).allowed_roles == ("support",)


def test_roles_text_of_commas_only_names_no_role() -> None:
    text = _markdown('allowed_roles: " , "\n').replace("visibility: public", "visibility: internal")
    with pytest.raises(ValidationError, match="at least one allowed role"):
        load_markdown_text(text)


# -- moments at the edge of the calendar --------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "bound"),
    [
        ("9999-12-31T23:00:00-05:00", "after 9999-12-31"),
        ("0001-01-01T00:00:00+05:00", "before 0001-01-01"),
    ],
)
@pytest.mark.parametrize("field", ["valid_from", "valid_until"])
def test_a_moment_outside_utc_range_is_rejected_by_field(value: str, bound: str, field: str) -> None:
    with pytest.raises(ValidationError, match=f"field '{field}'.*out of the supported range.*{bound}"):
        parse_moment(value, document="guide", field=field)


@pytest.mark.parametrize(
    "value", ["0001-01-01", "9999-12-31", "9999-12-31T23:59:59.999999", "9999-12-31T23:59:59Z"]
)
def test_moments_at_the_extremes_without_a_zone_are_accepted(value: str) -> None:
    assert parse_moment(value, document="guide", field="valid_until").isoformat().startswith(value[:10])


def test_front_matter_moment_out_of_range_rejects_only_its_file(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "far.md").write_text(_markdown("valid_until: 9999-12-31T23:00:00-05:00\n", id="far"), "utf-8")
    (docs / "near.md").write_text(_markdown("valid_until: 9999-12-31\n", id="near"), "utf-8")
    report = ingest_paths(create_kb(tmp_path / "kb", FakeEmbedder()), [docs], roles=["public"])
    assert report.added == ("near",)
    [(source, reason)] = report.rejected
    assert source == "far.md" and "valid_until" in reason and "out of the supported range" in reason


# -- --metadata keys that match no file ---------------------------------------------------------


def test_mapping_names_the_keys_that_match_no_file(tmp_path: Path) -> None:
    path = tmp_path / "map.yaml"
    path.write_text(
        '"internal/": {visibility: internal}\n"internal/**": {visibility: internal}\n'
        '"./guide/install.md": {trust: official}\n"missing.md": {trust: community}\n'
        '"*.pdf": {source_type: manual}\n"guide/*": {status: active}\n',
        encoding="utf-8",
    )
    mapping = MetadataMap.load(path)
    present = ["internal/a.md", "guide\\install.md", "notes.txt"]
    assert mapping.unmatched_keys(present) == ("internal/", "missing.md", "*.pdf")
    assert mapping.unmatched_keys([]) == tuple(key for key, _ in mapping.entries)


def test_unmatched_keys_agree_with_lookup(tmp_path: Path) -> None:
    mapping = MetadataMap((("docs/[ab].md", {"trust": "community"}), ("docs/c?.md", {"trust": "untrusted"})))
    present = ["docs/a.md", "docs/c.md"]
    assert mapping.unmatched_keys(present) == ("docs/c?.md",)
    assert mapping.lookup("docs/a.md") == {"trust": "community"} and mapping.lookup("docs/c.md") == {}


def test_an_unquoted_revision_keeps_the_text_it_was_written_as() -> None:
    text = _markdown("").replace("revision: '1'", "revision: 1.10")
    assert load_markdown_text(text).revision == "1.10"


def test_yaml_mistakes_are_told_on_one_line_with_the_line_of_the_file(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as caught:
        load_markdown_text("---\ntitle: ok\nrevision: [unclosed\nstatus: active\n---\n# A\n\ntext\n")
    message = str(caught.value)
    assert "\n" not in message and "<unicode string>" not in message
    # the parser stops at the colon of the line after the unclosed list: the file's line 4
    assert "front matter is not valid YAML: " in message and "at line 4, column 7" in message
    mapping = tmp_path / "map.yaml"
    mapping.write_text('"a.md": {trust: official\n"b.md": {}\n', "utf-8")
    with pytest.raises(IngestError) as caught_map:
        MetadataMap.load(mapping)
    assert "\n" not in str(caught_map.value) and "is not valid YAML: " in str(caught_map.value)


def test_a_sources_file_governance_version_is_the_text_written(tmp_path: Path) -> None:
    from veracity.sync.config import parse_sources

    text = "sources:\n  - name: docs\n    folder: docs\n    governance: {version_min: 3.10}\n"
    spec = parse_sources(text, base=tmp_path)[0]
    assert written_text(dict(spec.governance)["version_min"]) == "3.10"
    tenth = parse_sources(text.replace("3.10", "3.1"), base=tmp_path)[0]
    assert spec.governance_digest != tenth.governance_digest
