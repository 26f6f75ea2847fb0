"""Knowledge-base directories: create, ingest Markdown, reopen without re-embedding, manifest checks, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from veracity.cli.main import main
from veracity.fixtures import tenant_config
from veracity.index.embedders import FakeEmbedder
from veracity.index.sqlite.search import SQLiteSearchIndex
from veracity.ingest.run import ingest_paths
from veracity.kb.directory import (
    CATALOG_FILE,
    MANIFEST_FILE,
    create_kb,
    init_demo_kb,
    open_kb,
    read_manifest,
)
from veracity.model.contracts import AnswerStatus, Principal, Status
from veracity.model.errors import ConfigError, EmbedderMismatchError, SearchIndexError

FIXTURES = Path(__file__).parents[2] / "src" / "veracity" / "fixtures" / "starship"


class CountingEmbedder(FakeEmbedder):
    """The default FakeEmbedder (same model id) counting the texts it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.texts = 0

    def embed_batch(self, texts, *, kind="passage"):
        if kind == "passage":
            self.texts += len(texts)
        return super().embed_batch(texts, kind=kind)


def page(source: str, body: str, *, revision: str = "1", tenant: str | None = "acme") -> str:
    header = [f"id: {source}", f'revision: "{revision}"', f"title: {source}"]
    if tenant:
        header.append(f"tenant: {tenant}")
    header += [
        'valid_from: "2025-01-01T00:00:00Z"',
        "status: active",
        "visibility: public",
        "trust: official",
    ]
    return "---\n" + "\n".join(header) + "\n---\n\n" + body + "\n"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "guide").mkdir(parents=True)
    (folder / "guide" / "install.md").write_text(
        page("install", "# 安装\n\n星舰 3.2 需要 Python 3.11。配置项 config.max_retries 默认为 3。"), "utf-8"
    )
    (folder / "upgrade.md").write_text(page("upgrade", "# 升级\n\n使用 --to 3.2 参数升级。"), "utf-8")
    (folder / "broken.md").write_text("---\nid: broken\n---\n\nno revision\n", "utf-8")
    (folder / "tenant.yaml").write_text("tenant: acme\nroles: [public, support]\n", "utf-8")
    return folder


def ask(kb, question: str = "config.max_retries 默认是多少"):
    return kb.ask(question, Principal.of("acme", "public"), "3.2", tenant_config().as_of)


def test_ingest_then_reopen_answers_without_re_embedding(tmp_path, docs) -> None:
    embedder = CountingEmbedder()
    kb = create_kb(tmp_path / "kb", embedder)
    report = ingest_paths(kb, [docs], strict=True)
    assert sorted(report.added) == ["install", "upgrade"]
    assert [source for source, _ in report.rejected] == ["broken.md"]
    assert "required field is missing" in report.rejected[0][1]
    assert report.roles_defined == (("acme", ("public", "support")),)
    assert embedder.texts == report.chunks_added == report.index.embedded_chunks > 0
    assert ask(kb).status is AnswerStatus.ANSWER
    kb.catalog.store.close()

    again = CountingEmbedder()
    reopened = open_kb(tmp_path / "kb", again)
    assert isinstance(reopened.snapshot, SQLiteSearchIndex)
    answer = ask(reopened)
    assert answer.status is AnswerStatus.ANSWER and again.texts == 0
    assert "install" in {c.source_id for c in answer.citations}
    second = ingest_paths(reopened, [docs], strict=True)  # idempotent: nothing new, nothing embedded
    assert second.added == () and sorted(second.unchanged) == ["install", "upgrade"]
    assert again.texts == 0 and second.index.embedded_chunks == 0


def test_new_revision_supersedes_and_only_it_is_embedded(tmp_path, docs) -> None:
    embedder = CountingEmbedder()
    kb = create_kb(tmp_path / "kb", embedder)
    ingest_paths(kb, [docs])
    before = embedder.texts
    (docs / "upgrade.md").write_text(
        page("upgrade", "# 升级\n\n使用 --to 3.3 参数升级。", revision="2"), "utf-8"
    )
    report = ingest_paths(kb, [docs])
    assert report.revised == ("upgrade",) and report.added == ()
    statuses = {d.revision: d.status for d in kb.catalog.documents() if d.source_id == "upgrade"}
    assert statuses == {"1": Status.RETIRED, "2": Status.ACTIVE}
    assert embedder.texts - before == report.chunks_added
    old = next(d for d in kb.snapshot.documents.values() if d.source_id == "upgrade" and d.revision == "1")
    assert old.status is Status.RETIRED  # the index snapshot was synced too


def test_tenant_option_fills_missing_tenants_and_rejects_others(tmp_path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.md").write_text(page("a", "# A\n\n内容甲。", tenant=None), "utf-8")
    (folder / "b.md").write_text(page("b", "# B\n\n内容乙。", tenant="other"), "utf-8")
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    report = ingest_paths(kb, [folder], tenant="acme", roles=["public"])
    assert report.added == ("a",)
    assert report.rejected[0][0] == "b.md" and "acme" in report.rejected[0][1]
    assert kb.catalog.roles("acme") == frozenset({"public"})


def test_opening_with_another_model_is_a_clear_error(tmp_path) -> None:
    create_kb(tmp_path / "kb", FakeEmbedder()).catalog.store.close()
    with pytest.raises(
        EmbedderMismatchError, match=r"fake-hashed-bow-256@1.*fake-hashed-bow-64@1.*--embedder fake"
    ):
        open_kb(tmp_path / "kb", FakeEmbedder(dim=64))
    assert isinstance(open_kb(tmp_path / "kb").embedder, FakeEmbedder)  # by the manifest's name


def test_the_index_refuses_another_model_even_if_the_manifest_lies(tmp_path) -> None:
    kb = create_kb(tmp_path / "kb", FakeEmbedder())
    with pytest.raises(EmbedderMismatchError):
        kb.snapshot.check_embedder(FakeEmbedder(dim=64))


def test_manifest_records_the_model_and_detects_edits(tmp_path) -> None:
    kb = init_demo_kb(tmp_path / "kb", FakeEmbedder())
    manifest = read_manifest(tmp_path / "kb")
    assert manifest["embedding"] == {
        "embedder": "fake",
        "model_id": "fake-hashed-bow-256@1",
        "dim": 256,
        "normalization": "l2",
        "distance": "cosine",
    }
    stats = kb.snapshot.stats()
    assert manifest["index"]["chunks"] == stats.chunks == stats.vectors == manifest["catalog"]["chunks"]
    assert manifest["catalog"]["documents_by_status"] == {"active": 15, "retired": 2, "withdrawn": 1}
    assert manifest["chunker"] and manifest["tokenizer"].startswith("veracity.text.tokenize@")
    assert manifest["parsers"]["veracity.ingest"] and "markdown-it-py" in manifest["parsers"]
    path = tmp_path / "kb" / MANIFEST_FILE
    edited = json.loads(path.read_text("utf-8"))
    edited["embedding"]["dim"] = 512
    path.write_text(json.dumps(edited), "utf-8")
    with pytest.raises(SearchIndexError, match="digest"):
        open_kb(tmp_path / "kb")


def test_not_a_knowledge_base_and_no_overwrite(tmp_path) -> None:
    with pytest.raises(SearchIndexError, match="not a veracity knowledge base"):
        open_kb(tmp_path)
    create_kb(tmp_path / "kb", FakeEmbedder())
    assert (tmp_path / "kb" / CATALOG_FILE).is_file()
    with pytest.raises(ConfigError, match="already holds"):
        create_kb(tmp_path / "kb", FakeEmbedder())


def test_cli_ingest_and_ask(tmp_path) -> None:
    runner = CliRunner()
    kb_dir = tmp_path / "kb"
    result = runner.invoke(
        main, ["ingest", str(FIXTURES), "--kb", str(kb_dir), "--embedder", "fake", "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert "added 18" in result.output and "rejected 0" in result.output
    again = runner.invoke(main, ["ingest", str(FIXTURES), "--kb", str(kb_dir), "--no-progress"])
    assert again.exit_code == 0 and "unchanged 18" in again.output and "embedded 0" in again.output
    answer = runner.invoke(main, ["ask", "--kb", str(kb_dir), "--json"])
    assert answer.exit_code == 0, answer.output
    data = json.loads(answer.output)
    assert data["status"] == "answer"
    assert {"faq-3.2-sso", "migration-2x-to-3.2"} <= {c["source_id"] for c in data["citations"]}
    wrong = runner.invoke(main, ["ask", "--kb", str(kb_dir), "--embedder", "use"])
    assert wrong.exit_code == 1 and "built with 'fake-hashed-bow-256@1'" in wrong.output


def test_cli_ingest_reports_rejections_with_exit_status_1(tmp_path, docs) -> None:
    args = ["ingest", str(docs), "--kb", str(tmp_path / "kb"), "--embedder", "fake", "--no-progress"]
    result = CliRunner().invoke(main, [*args, "--strict"])
    assert result.exit_code == 1
    assert "added 2" in result.output and "rejected broken.md" in result.output


def test_cli_init_demo(tmp_path) -> None:
    result = CliRunner().invoke(main, ["init-demo", "--kb", str(tmp_path / "kb"), "--embedder", "fake"])
    assert result.exit_code == 0 and "18 documents, 73 chunks" in result.output
