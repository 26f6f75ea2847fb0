"""Batch loading: metadata layers, sidecars, the --metadata file, and bad files rejected one by one."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from veracity.parse.batch import iter_source_files, load_sources
from veracity.parse.errors import IngestError
from veracity.parse.metadata import GovernanceDefaults

GOVERNANCE = {"valid_from": "2026-01-01", "status": "active", "visibility": "public", "trust": "official"}


def _front_matter(metadata: dict[str, Any], body: str) -> str:
    return "---\n" + yaml.safe_dump(metadata, allow_unicode=True) + "---\n\n" + body


@pytest.fixture
def corpus(tmp_path: Path, pdf_bytes: Callable[..., bytes], write_sidecar: Callable[..., Path]) -> Path:
    """A folder with one good file per format and one bad file per failure."""
    pytest.importorskip("pdfplumber", reason="the corpus holds a PDF: needs the 'pdf' extra")
    root = tmp_path / "docs"
    (root / "guides").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD.md").write_text("# hidden", encoding="utf-8")
    (root / ".draft.md").write_text("# hidden", encoding="utf-8")
    (root / "guides" / "setup.md").write_text(
        _front_matter({"id": "setup", "title": "安装", **GOVERNANCE}, "# 安装\n\n运行安装程序。"),
        encoding="utf-8",
    )
    page = root / "guides" / "sso.html"
    page.write_text("<title>单点登录</title><h1>单点登录</h1><p>Team 计划使用 OIDC。</p>", encoding="utf-8")
    write_sidecar(page, {**GOVERNANCE, "trust": "community"})
    notes = root / "notes.txt"
    notes.write_text("发布说明：3.2 版本。", encoding="utf-8")
    (root / "notes.meta.yaml").write_text(yaml.safe_dump(GOVERNANCE), encoding="utf-8")
    (root / "manual.pdf").write_bytes(pdf_bytes([[(11, "Manual text.", 700)]]))
    (root / "legacy.txt").write_bytes("旧系统的说明文字，使用国标编码保存。".encode("gb18030"))
    # bad files
    (root / "empty.md").write_text("", encoding="utf-8")
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really a pdf")
    (root / "russian.txt").write_bytes("Привет, мир".encode("gbk"))
    with (root / "huge.txt").open("wb") as handle:
        os.truncate(handle.fileno(), 200 * 1024 * 1024)
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "bad-status.md").write_text(
        _front_matter({**GOVERNANCE, "status": "published"}, "正文"), encoding="utf-8"
    )
    (root / "no-trust.md").write_text(
        _front_matter({k: v for k, v in GOVERNANCE.items() if k != "trust"}, "正文"), encoding="utf-8"
    )
    (root / "bad-sidecar.txt").write_text("正文", encoding="utf-8")
    (root / "bad-sidecar.txt.meta.yaml").write_text("status: [unclosed", encoding="utf-8")
    return root


@pytest.fixture
def mapping(tmp_path: Path) -> Path:
    path = tmp_path / "metadata.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "*.pdf": {**GOVERNANCE, "source_type": "manual"},
                "manual.pdf": {"revision": "7", "title": "手册"},
                "legacy.txt": GOVERNANCE,
            },
            allow_unicode=True,
        ),
        encoding="utf-8",
    )
    return path


def test_batch_loads_the_good_files_and_rejects_each_bad_one(corpus: Path, mapping: Path) -> None:
    result = load_sources([corpus], tenant="acme", metadata_file=mapping)
    loaded = {path.relative_to(corpus).as_posix(): doc for path, doc in result.documents}
    assert sorted(loaded) == ["guides/setup.md", "guides/sso.html", "legacy.txt", "manual.pdf", "notes.txt"]
    assert [doc.source_id for doc in loaded.values()] == ["setup", "guides/sso", "legacy", "manual", "notes"]
    assert loaded["guides/sso.html"].trust.value == "community"
    assert loaded["guides/sso.html"].title == "单点登录"
    assert (loaded["manual.pdf"].revision, loaded["manual.pdf"].title) == ("7", "手册")
    assert loaded["manual.pdf"].source_type == "manual"
    assert loaded["legacy.txt"].body == "旧系统的说明文字，使用国标编码保存。"
    assert all(doc.tenant == "acme" for doc in loaded.values())
    assert [p.fmt for p in result.parsed] == ["markdown", "html", "text", "pdf", "text"]

    reasons = {path.name: reason for path, reason in result.rejected}
    assert sorted(reasons) == [
        "bad-sidecar.txt", "bad-status.md", "broken.pdf", "empty.md", "huge.txt", "image.png",
        "no-trust.md", "russian.txt",
    ]
    assert "empty" in reasons["empty.md"]
    assert "damaged" in reasons["broken.pdf"] or "no extractable text" in reasons["broken.pdf"]
    assert "wrong encoding" in reasons["russian.txt"]
    assert "200.0 MB" in reasons["huge.txt"] and "50.0 MB" in reasons["huge.txt"]
    assert "not an image" in reasons["image.png"]  # images are read by OCR; this one is no image
    assert "field 'status'" in reasons["bad-status.md"] and "published" in reasons["bad-status.md"]
    assert "field 'trust'" in reasons["no-trust.md"] and "missing" in reasons["no-trust.md"]
    assert "front matter" in reasons["no-trust.md"] and "no-trust.md.meta.yaml" in reasons["no-trust.md"]
    assert "not valid YAML" in reasons["bad-sidecar.txt"]


def test_walk_is_sorted_and_skips_hidden_files_and_sidecars(corpus: Path) -> None:
    names = [relative for _, relative in iter_source_files([corpus])]
    assert names == sorted(names)
    assert not any(name.startswith(".") or "/." in name or name.endswith(".meta.yaml") for name in names)
    assert load_sources([corpus]) == load_sources([corpus])


def test_the_batch_walks_folders_as_an_ingest_does(tmp_path: Path) -> None:
    """One walker (veracity.parse.walk) for both: dependency folders and links leading out stay out."""
    from veracity.ingest.sources import scan_sources

    (tmp_path / "docs" / "node_modules" / "pkg").mkdir(parents=True)
    (tmp_path / "docs" / "node_modules" / "pkg" / "README.md").write_text("# dependency\n", encoding="utf-8")
    (tmp_path / "docs" / "guide.md").write_text("# guide\n", encoding="utf-8")
    (tmp_path / "outside.md").write_text("# outside\n", encoding="utf-8")
    (tmp_path / "docs" / "link.md").symlink_to(tmp_path / "outside.md")
    batch = [relative for _, relative in iter_source_files([tmp_path / "docs"])]
    ingest = [file.source for file in scan_sources([tmp_path / "docs"]).files]
    assert batch == ingest == ["guide.md"]


def test_missing_governance_field_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "plain.txt"
    path.write_text("内容", encoding="utf-8")
    ((_, reason),) = load_sources([path], tenant="acme").rejected
    assert "field 'valid_from'" in reason and "required field is missing" in reason
    assert "plain.txt.meta.yaml or plain.meta.yaml" in reason and "--metadata" in reason


def test_strict_names_every_missing_field_at_once(tmp_path: Path) -> None:
    path = tmp_path / "plain.md"
    path.write_text("# Plain\n\nNo front matter at all.", encoding="utf-8")
    ((_, reason),) = load_sources([path]).rejected
    assert "all missing: tenant, valid_from, status, visibility, trust" in reason


def test_defaults_fill_missing_governance_fields_and_say_which(tmp_path: Path) -> None:
    path = tmp_path / "guide" / "plain.md"
    path.parent.mkdir()
    path.write_text("---\ntrust: community\nsource_id: x-1\ntags: [a, b]\n---\n# Plain\n\nText.", "utf-8")
    os.utime(path, (1_767_225_600, 1_767_225_600))  # 2026-01-01T00:00:00Z
    ((_, document),) = load_sources([tmp_path], defaults=GovernanceDefaults(tenant="default")).documents
    assert (document.source_id, document.title, document.tenant) == ("guide/plain", "Plain", "default")
    assert (document.status.value, document.visibility.value, document.trust.value) == (
        "active", "public", "community"
    )
    assert document.valid_from.isoformat() == "2026-01-01T00:00:00+00:00"
    assert document.defaulted_fields == ("revision", "status", "tenant", "valid_from", "visibility")
    assert document.extra_metadata == (("source_id", '"x-1"'), ("tags", '["a","b"]'))


def test_a_file_modified_in_the_future_is_valid_from_now(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    path = tmp_path / "future.md"
    path.write_text("# Future\n\nText.", encoding="utf-8")
    os.utime(path, (4_102_444_800, 4_102_444_800))  # 2100
    ((_, document),) = load_sources([path], defaults=GovernanceDefaults(tenant="t")).documents
    assert document.valid_from <= datetime.now(UTC)


def test_a_defaulted_valid_from_is_the_minute_of_the_modification(tmp_path: Path) -> None:
    """A service asks "now" at the start of its minute: a file written in that minute is valid then."""
    path = tmp_path / "note.md"
    path.write_text("# Note\n\nText.", encoding="utf-8")
    os.utime(path, (1_780_000_019.9, 1_780_000_019.9))  # 59.9 s past a minute's start
    ((_, document),) = load_sources([path], defaults=GovernanceDefaults(tenant="t")).documents
    assert document.valid_from.timestamp() == 1_780_000_020 - 60
    # floored to whole service minutes: never after the start of the minute a service asks in
    from veracity.parse.metadata import VALID_FROM_SECONDS
    from veracity.service.core.cache import BUCKET_SECONDS

    assert VALID_FROM_SECONDS % BUCKET_SECONDS == 0


def test_missing_tenant_without_option(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("内容", encoding="utf-8")
    (tmp_path / "a.meta.yaml").write_text(yaml.safe_dump(GOVERNANCE), encoding="utf-8")
    ((_, reason),) = load_sources([path]).rejected
    assert "field 'tenant'" in reason


def test_front_matter_beats_sidecar_beats_mapping(tmp_path: Path, write_sidecar: Callable[..., Path]) -> None:
    path = tmp_path / "doc.md"
    path.write_text(_front_matter({"title": "来自正文"}, "# 标题\n\n内容"), encoding="utf-8")
    write_sidecar(path, {"title": "来自旁注", "revision": "2", **GOVERNANCE})
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps({"doc.md": {"title": "映射", "revision": "3", "trust": "untrusted"}}))
    ((_, document),) = load_sources([path], tenant="acme", metadata_file=mapping).documents
    assert (document.title, document.revision, document.trust.value) == ("来自正文", "2", "official")


def test_two_sidecars_are_ambiguous(tmp_path: Path) -> None:
    path = tmp_path / "guide.txt"
    path.write_text("内容", encoding="utf-8")
    for name in ("guide.txt.meta.yaml", "guide.meta.yaml"):
        (tmp_path / name).write_text(yaml.safe_dump(GOVERNANCE), encoding="utf-8")
    ((_, reason),) = load_sources([path], tenant="acme").rejected
    assert "two sidecar files" in reason


def test_a_document_of_another_tenant_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "other.md"
    path.write_text(_front_matter({"tenant": "globex", **GOVERNANCE}, "内容"), encoding="utf-8")
    ((_, reason),) = load_sources([path], tenant="acme").rejected
    assert "globex" in reason and "acme" in reason


def test_duplicate_ids_are_rejected(tmp_path: Path) -> None:
    for name in ("guide.md", "guide.txt"):
        (tmp_path / name).write_text("内容 " + name, encoding="utf-8")
    (tmp_path / "guide.meta.yaml").write_text(yaml.safe_dump(GOVERNANCE), encoding="utf-8")
    result = load_sources([tmp_path], tenant="acme")
    assert [p.name for p, _ in result.documents] == ["guide.md"]
    ((path, reason),) = result.rejected
    assert path.name == "guide.txt" and "already loaded" in reason


def test_missing_path_is_rejected_not_raised(tmp_path: Path) -> None:
    ((path, reason),) = load_sources([tmp_path / "nope.md"], tenant="acme").rejected
    assert path.name == "nope.md" and "no such file" in reason


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "must be a mapping"),
        ("'*.md': just-a-string", "must map to a mapping"),
        ("a: [", "not valid"),
    ],
)
def test_invalid_metadata_file_raises(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "meta.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(IngestError, match=message):
        load_sources([tmp_path], metadata_file=path)


def test_starship_fixture_folder_loads(tmp_path: Path) -> None:
    corpus = Path(__file__).resolve().parents[2] / "src" / "veracity" / "fixtures" / "starship"
    result = load_sources([corpus], tenant="starship")
    assert len(result.documents) == len(list(corpus.glob("*.md")))
    assert sorted(p.name for p, _ in result.rejected) == ["cases-extra.jsonl", "cases.jsonl", "tenant.yaml"]
