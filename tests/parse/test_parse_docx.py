"""DOCX to structure nodes: heading styles, lists, tables with header, code, damaged files."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from veracity.model.contracts import ChunkKind
from veracity.parse.chunking import chunk_document
from veracity.parse.documents import make_document
from veracity.parse.errors import CorruptFileError
from veracity.parse.nodes import NodeKind
from veracity.parse.parsers import parse_file

docx = pytest.importorskip("docx", reason="DOCX parsing needs the 'docx' extra (python-docx)")

from docx.enum.style import WD_STYLE_TYPE  # noqa: E402

from veracity.parse.docx import parse_docx  # noqa: E402


def _build() -> bytes:
    document = docx.Document()
    document.core_properties.title = ""
    document.add_paragraph("Starship 管理手册", style="Title")
    document.add_paragraph("本手册面向管理员。")
    document.add_heading("邀请成员", level=1)
    document.add_paragraph("打开设置页面", style="List Number")
    document.add_paragraph("输入邮箱", style="List Number")
    document.add_paragraph("可以批量输入", style="List Bullet 2")
    document.add_heading("计划对比", level=2)
    table = document.add_table(rows=3, cols=2)
    contents = [("计划", "席位上限"), ("Team", "50"), ("Enterprise", "不限")]
    for row, cells in zip(table.rows, contents, strict=True):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text
    document.add_heading("命令行", level=1)
    document.styles.add_style("Code", WD_STYLE_TYPE.PARAGRAPH)
    document.add_paragraph("starship invite --email a@example.com", style="Code")
    document.add_paragraph("starship invite --list", style="Code")
    document.add_paragraph("以上命令需要管理员权限。")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def manual() -> bytes:
    return _build()


def test_headings_lists_tables_and_code(manual: bytes, consistent: Callable[..., None]) -> None:
    parsed = parse_docx(manual, source="manual.docx")
    summary = [(n.kind, n.heading_path) for n in parsed.nodes]
    assert summary == [
        (NodeKind.HEADING, ("Starship 管理手册",)),
        (NodeKind.PARAGRAPH, ("Starship 管理手册",)),
        (NodeKind.HEADING, ("邀请成员",)),
        (NodeKind.LIST, ("邀请成员",)),
        (NodeKind.HEADING, ("邀请成员", "计划对比")),
        (NodeKind.TABLE, ("邀请成员", "计划对比")),
        (NodeKind.HEADING, ("命令行",)),
        (NodeKind.CODE, ("命令行",)),
        (NodeKind.PARAGRAPH, ("命令行",)),
    ]
    assert parsed.title == "Starship 管理手册"
    assert parsed.nodes[3].text == "1. 打开设置页面\n2. 输入邮箱\n    - 可以批量输入"
    table = parsed.nodes[5]
    assert table.header == ("计划", "席位上限")
    assert table.cells() == (
        (("计划", "Team"), ("席位上限", "50")),
        (("计划", "Enterprise"), ("席位上限", "不限")),
    )
    assert table.text.splitlines()[:2] == ["| 计划 | 席位上限 |", "| --- | --- |"]
    assert parsed.nodes[7].text == "```\nstarship invite --email a@example.com\nstarship invite --list\n```"
    consistent(parsed)


def test_structural_chunks_keep_the_table_whole(manual: bytes, governance: dict[str, object]) -> None:
    parsed = parse_docx(manual)
    chunks = chunk_document(make_document(governance, parsed.body), "structural", size=20)
    tables = [c for c in chunks if c.kind is ChunkKind.TABLE]
    assert [c.text for c in tables] == [parsed.nodes[5].text]
    assert tables[0].heading_path == ("邀请成员", "计划对比")


def test_parse_file_dispatches_docx(tmp_path: Path, manual: bytes) -> None:
    path = tmp_path / "manual.docx"
    path.write_bytes(manual)
    assert parse_file(path).fmt == "docx"


def test_not_a_zip_is_a_clear_error() -> None:
    with pytest.raises(CorruptFileError, match=r"old\.doc.*|not a DOCX"):
        parse_docx(b"\xd0\xcf\x11\xe0 an old binary .doc", source="old.docx")


def test_zip_without_a_document_is_a_clear_error() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "not a word document")
    with pytest.raises(CorruptFileError, match="damaged"):
        parse_docx(buffer.getvalue(), source="fake.docx")


def test_damaged_document_xml_is_a_clear_error(manual: bytes) -> None:
    source = zipfile.ZipFile(io.BytesIO(manual))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for item in source.infolist():
            data = source.read(item.filename)
            archive.writestr(item, data[: len(data) // 2] if item.filename == "word/document.xml" else data)
    with pytest.raises(CorruptFileError, match="damaged"):
        parse_docx(buffer.getvalue(), source="cut.docx")
