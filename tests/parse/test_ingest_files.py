"""Reading files: plain text, encodings, size limit, empty files, unknown formats."""

from __future__ import annotations

import codecs
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from veracity.model.errors import ValidationError
from veracity.parse.errors import (
    EmptySourceError,
    EncodingError,
    FileTooLargeError,
    IngestError,
    MissingExtraError,
    UnsupportedFormatError,
)
from veracity.parse.nodes import NodeKind
from veracity.parse.parsers import decode_text, parse_file

CHINESE = "升级到 3.2 以后，Team 计划不能再使用旧版 SAML 单点登录。"


def test_plain_text_paragraphs_split_at_blank_lines(tmp_path: Path, consistent: Callable[..., None]) -> None:
    path = tmp_path / "notes.txt"
    text = "第一段第一行\n第一段第二行\n\n\n# 不是标题\n- 也不是列表\n\n  缩进    的段落  \n"
    path.write_text(text, encoding="utf-8")
    parsed = parse_file(path)
    assert [n.kind for n in parsed.nodes] == [NodeKind.PARAGRAPH] * 3
    assert parsed.body == "第一段第一行\n第一段第二行\n\n\\# 不是标题\n\\- 也不是列表\n\n缩进    的段落"
    assert parsed.fmt == "text" and parsed.title is None
    consistent(parsed)


def test_utf8_with_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "bom.md"
    path.write_bytes(codecs.BOM_UTF8 + "# 标题\r\n\r\n正文\r\n".encode())
    parsed = parse_file(path)
    assert parsed.body == "# 标题\n\n正文" and parsed.title == "标题"


def test_utf16_with_bom(tmp_path: Path) -> None:
    path = tmp_path / "wide.txt"
    path.write_bytes("宽字符文本".encode("utf-16"))
    assert parse_file(path).body == "宽字符文本"


def test_gb18030_chinese_file_decodes(tmp_path: Path) -> None:
    path = tmp_path / "legacy.txt"
    path.write_bytes(CHINESE.encode("gb18030"))
    assert parse_file(path).body == CHINESE


def test_gbk_file_without_chinese_is_wrong_encoding(tmp_path: Path) -> None:
    path = tmp_path / "russian.txt"
    path.write_bytes("Привет, мир: это не китайский текст".encode("gbk"))
    with pytest.raises(EncodingError, match=r"wrong encoding.*UTF-8") as caught:
        parse_file(path)
    assert str(path) in str(caught.value)


def test_latin1_file_is_wrong_encoding(tmp_path: Path) -> None:
    path = tmp_path / "cafe.md"
    path.write_bytes("Café crème, résumé, naïve façade Ünïcödé".encode("latin-1"))
    with pytest.raises(EncodingError, match="byte 0x"):
        parse_file(path)


def test_nul_bytes_are_wrong_encoding() -> None:
    with pytest.raises(EncodingError, match="NUL"):
        decode_text("abc".encode("utf-16-le"), source="x.txt")


def test_file_over_the_limit_is_rejected_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.txt"
    with path.open("wb") as handle:
        os.truncate(handle.fileno(), 200 * 1024 * 1024)  # sparse: instant, no disk used
    started = time.perf_counter()
    with pytest.raises(FileTooLargeError, match=r"200\.0 MB.*limit of 50\.0 MB") as caught:
        parse_file(path)
    assert time.perf_counter() - started < 1.0
    assert str(path) in str(caught.value)


def test_size_limit_is_configurable(tmp_path: Path) -> None:
    path = tmp_path / "small.txt"
    path.write_text("x" * 2000, encoding="utf-8")
    with pytest.raises(FileTooLargeError):
        parse_file(path, max_bytes=1000)
    assert parse_file(path, max_bytes=5000).body == "x" * 2000


@pytest.mark.parametrize("content", [b"", b"  \n\t\n  ", "\u3000\n".encode()])
@pytest.mark.parametrize("name", ["empty.md", "empty.txt", "empty.html"])
def test_empty_or_whitespace_file(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(EmptySourceError, match=name):
        parse_file(path)


def test_markdown_with_only_front_matter_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "meta-only.md"
    path.write_text("---\nid: x\n---\n\n", encoding="utf-8")
    with pytest.raises(EmptySourceError):
        parse_file(path)


@pytest.mark.parametrize("name", ["image.gif", "README", "archive.tar.gz", "legacy.doc"])
def test_unknown_format_lists_the_supported_ones(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"data")
    with pytest.raises(UnsupportedFormatError, match=r"supported suffixes: \.docx, \.htm, \.html") as caught:
        parse_file(path)
    assert name in str(caught.value)


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no such file"):
        parse_file(tmp_path / "absent.md")
    folder = tmp_path / "folder.md"
    folder.mkdir()
    with pytest.raises(IngestError, match="not a regular file"):
        parse_file(folder)


def test_ingest_errors_are_validation_errors() -> None:
    assert issubclass(IngestError, ValidationError)


@pytest.mark.parametrize(
    ("name", "module", "extra"),
    [("a.pdf", "pdfplumber", "pdf"), ("a.docx", "docx", "docx"), ("a.png", "PIL", "ocr")],
)
def test_missing_extra_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, module: str, extra: str
) -> None:
    path = tmp_path / name
    path.write_bytes(b"%PDF-1.4 or PK zip, never read")
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    with pytest.raises(MissingExtraError, match=rf"pip install 'veracity\[{extra}\]'"):
        parse_file(path)
