"""Document identity and validation."""

from __future__ import annotations

import pytest

from veracity.model.errors import EmptyContentError, ValidationError, VersionRangeError
from veracity.parse.documents import document_identity, make_document
from veracity.parse.front_matter import load_markdown_batch

BASE = {
    "id": "guide",
    "revision": "1",
    "title": "指南",
    "tenant": "acme",
    "valid_from": "2026-01-01",
    "status": "active",
    "visibility": "public",
    "trust": "official",
}
BODY = "# 标题\n\n第一段内容。\n\n第二段内容。"


def doc(body: str = BODY, **changes: object):
    return make_document({**BASE, **changes}, body)


def test_id_is_stable_under_whitespace_changes() -> None:
    spaced = "# 标题\n\n\n\n第一段内容。   \n\n第二段内容。\r\n"
    assert doc().document_id == doc(spaced).document_id
    assert doc().content_digest == doc(spaced).content_digest


def test_new_revision_with_same_text_gets_new_id() -> None:
    assert doc().document_id != doc(revision="2").document_id


def test_changed_content_gets_new_id() -> None:
    assert doc().document_id != doc(BODY + "\n\n第三段。").document_id


@pytest.mark.parametrize("body", ["", "   ", "\n\n\t \n"])
def test_empty_content_is_rejected(body: str) -> None:
    with pytest.raises(EmptyContentError, match=r"'guide'.*'body'.*empty"):
        doc(body)
    with pytest.raises(EmptyContentError):
        document_identity("acme", "x", "1", body)


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"valid_from": "2026-05-01", "valid_until": "2026-04-01"}, "valid_until", "reversed"),
        ({"visibility": "internal"}, "allowed_roles", "at least one allowed role"),
        ({"status": "archived"}, "status", "unknown status 'archived'"),
        ({"trust": "verified"}, "trust", "unknown trust"),
        ({"visibility": "secret"}, "visibility", "unknown visibility"),
        ({"facts": [{"id": "f1", "quote": "不存在的句子"}]}, "facts", "does not occur"),
        ({"version_min": "3.x"}, "version_min", "malformed version"),
        ({"version_min": "3.2", "version_max": "2.8"}, "version_min", "reversed"),
        ({"valid_from": "not a date"}, "valid_from", "cannot parse"),
        ({"title": None}, "title", "missing"),
    ],
)
def test_validation_errors_name_document_and_field(changes: dict, field: str, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        doc(**changes)
    assert caught.value.document == "guide"
    assert caught.value.field == field
    assert message in str(caught.value)


def test_version_range_error_is_a_validation_error() -> None:
    with pytest.raises(VersionRangeError):
        doc(version_max="latest")


def test_fact_quote_found_and_kept() -> None:
    document = doc(facts=[{"id": "f1", "quote": "第一段内容。"}])
    assert [f.fact_id for f in document.facts] == ["f1"]
    assert document.facts[0].stance == "supports"


def test_batch_rejects_bad_document_whole_and_loads_the_rest() -> None:
    good = (
        "---\nid: a\nrevision: '1'\ntitle: A\ntenant: t\nvalid_from: 2026-01-01\n"
        "status: active\nvisibility: public\ntrust: official\n---\n正文。"
    )
    bad = good.replace("id: a", "id: b").replace("status: active", "status: gone")
    report = load_markdown_batch([("a.md", good), ("b.md", bad), ("c.md", "no front matter")])
    assert [d.source_id for d in report.documents] == ["a"]
    assert [name for name, _ in report.rejected] == ["b.md", "c.md"]
    assert "status" in report.rejected[0][1]
    assert "'id'" in report.rejected[1][1]


def test_the_same_file_for_two_tenants_is_two_documents() -> None:
    acme, _ = document_identity("acme", "terms", "1", "Provided as is.")
    globex, digest = document_identity("globex", "terms", "1", "Provided as is.")
    assert acme != globex and digest == document_identity("acme", "terms", "1", "Provided  as is.")[1]
