"""`veracity ingest` takes every supported format, with metadata from the file, a sidecar or a mapping."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from veracity.cli.main import main
from veracity.fixtures import tenant_config
from veracity.index.embedders import FakeEmbedder
from veracity.kb.directory import open_kb
from veracity.model.contracts import AnswerStatus, Principal

GOVERNANCE = "valid_from: 2026-01-01\nstatus: active\nvisibility: public\ntrust: official\n"


def test_ingest_html_text_and_docx_into_a_knowledge_base(tmp_path) -> None:
    docx = pytest.importorskip("docx")
    src = tmp_path / "src"
    src.mkdir()
    (src / "guide.html").write_text(
        "<html><head><title>网关指南</title>"
        '<meta name="veracity:valid_from" content="2026-01-01">'
        '<meta name="veracity:status" content="active">'
        '<meta name="veracity:visibility" content="public">'
        '<meta name="veracity:trust" content="official"></head>'
        "<body><nav>首页 | 登录</nav><h1>网关指南</h1><h2>超时</h2>"
        "<p>网关默认超时为 30 秒，可以用 gateway.timeout 修改。</p>"
        "<table><tr><th>参数</th><th>默认值</th></tr><tr><td>gateway.timeout</td><td>30</td></tr></table>"
        "<script>alert(1)</script></body></html>",
        "utf-8",
    )
    (src / "notes.txt").write_text("发布说明\n\n3.2 版本修复了网关重试问题。", "utf-8")
    (src / "notes.txt.meta.yaml").write_text("title: 发布说明\n" + GOVERNANCE, "utf-8")
    document = docx.Document()
    document.add_heading("运维手册", level=1)
    document.add_paragraph("重启网关前先排空连接。")
    document.save(src / "ops.docx")
    (tmp_path / "meta.yaml").write_text("ops.docx:\n  " + GOVERNANCE.replace("\n", "\n  "), "utf-8")
    (src / "orphan.txt").write_text("没有元数据的文件。", "utf-8")

    result = CliRunner().invoke(
        main,
        [
            "ingest", str(src), "--kb", str(tmp_path / "kb"), "--tenant", "acme", "--roles", "public",
            "--metadata", str(tmp_path / "meta.yaml"), "--embedder", "fake", "--no-progress", "--strict",
        ],
    )  # fmt: skip
    assert result.exit_code == 1, result.output  # orphan.txt is rejected, the rest is in
    assert "added 3" in result.output and "rejected orphan.txt" in result.output

    kb = open_kb(tmp_path / "kb", FakeEmbedder())
    assert sorted(d.source_id for d in kb.catalog.documents()) == ["guide", "notes", "ops"]
    guide = kb.catalog.document("guide")
    assert "首页" not in guide.body and "alert" not in guide.body
    assert "| 参数 | 默认值 |" in guide.body
    answer = kb.ask(
        "gateway.timeout 默认是多少？", Principal.of("acme", "public"), "3.2", tenant_config().as_of
    )
    assert answer.status is AnswerStatus.ANSWER
    assert answer.citations[0].source_id == "guide"
