"""Registries: built-in names without imports, plugins from entry points, clear errors.

The plugin is a real installed distribution as ``importlib.metadata`` sees one: a
``*.dist-info`` folder with ``entry_points.txt`` on ``sys.path``, beside the module it names
(``fake_veracity_plugin``, written by the test).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from veracity.model.errors import ConfigError
from veracity.model.registry import COMPOSERS, EMBEDDERS, OCR_ENGINES, PARSERS
from veracity.parse import parsers

PLUGIN_MODULE = '''
from veracity.index.embedders import FakeEmbedder
from veracity.parse.nodes import Block, NodeKind, assemble
from veracity.pipeline.composer import ExtractiveComposer


def tiny_embedder():
    return FakeEmbedder(dim=8)


class LinesParser:
    """A format of the test's own: one paragraph per line."""

    suffixes = (".lines",)

    def parse(self, data, *, source, limits, ocr):
        text = data.decode("utf-8")
        return assemble([Block(NodeKind.PARAGRAPH, line) for line in text.splitlines() if line], fmt="lines")


def echo_composer(values, environ):
    composer = ExtractiveComposer()
    composer.name = "echo"
    composer.values = dict(values)
    return composer
'''
ENTRY_POINTS = """
[veracity.embedders]
tiny = fake_veracity_plugin:tiny_embedder
use = fake_veracity_plugin:tiny_embedder

[veracity.parsers]
lines = fake_veracity_plugin:LinesParser

[veracity.composers]
echo = fake_veracity_plugin:echo_composer

[veracity.ocr]
broken = no_such_module_anywhere:Engine
"""
REGISTRIES = (EMBEDDERS, COMPOSERS, PARSERS, OCR_ENGINES)


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``fake-veracity-plugin`` installed on ``sys.path`` for one test."""
    info = tmp_path / "fake_veracity_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-veracity-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    (tmp_path / "fake_veracity_plugin.py").write_text(PLUGIN_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    for registry in REGISTRIES:
        registry.rescan()
    yield tmp_path
    sys.modules.pop("fake_veracity_plugin", None)
    for registry in REGISTRIES:
        registry.rescan()


def test_built_in_names_list_without_importing_them() -> None:
    assert EMBEDDERS.names() == ("use", "e5", "fake")
    assert COMPOSERS.names() == ("extractive", "llm")
    assert set(OCR_ENGINES) == {"rapidocr", "tesseract"}
    assert "md" not in PARSERS and "markdown" in PARSERS


def test_the_parser_registry_names_exactly_the_formats_the_parsers_read() -> None:
    built_in = {entry.name for entry in PARSERS.entries() if entry.origin == "veracity"}
    assert built_in == {*parsers._TEXT_PARSERS, *parsers._BINARY_PARSERS} == set(parsers.FORMATS.values())


def test_an_unknown_name_lists_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown embedder 'nope'; valid values: e5, fake, use"):
        EMBEDDERS["nope"]
    assert EMBEDDERS.get("nope") is None and "nope" not in EMBEDDERS
    assert EMBEDDERS.get("fake").__name__ == "FakeEmbedder"


def test_a_plugin_adds_names_and_never_replaces_a_built_in(plugin: Path) -> None:
    assert EMBEDDERS.names() == ("use", "e5", "fake", "tiny")
    assert EMBEDDERS.origin("tiny") == "fake-veracity-plugin"
    assert EMBEDDERS.origin("use") == "veracity"
    shadowed = [e for e in EMBEDDERS.entries() if e.shadowed]
    assert [(e.name, e.origin) for e in shadowed] == [("use", "fake-veracity-plugin")]


def test_a_plugin_embedder_is_built_by_name_and_offered_on_the_command_line(plugin: Path) -> None:
    from veracity.cli.common import EMBEDDER_CHOICE
    from veracity.index.embedders import make_embedder

    assert make_embedder("tiny").dim == 8
    assert "tiny" in EMBEDDER_CHOICE.choices


def test_a_plugin_format_is_read_by_suffix_and_found_in_folders(plugin: Path, tmp_path: Path) -> None:
    from veracity.ingest.sources import scan_sources

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.lines").write_text("first line\nsecond line\n")
    (folder / "other.xyz").write_text("not read")
    assert parsers.format_of("a/b.LINES") == "lines"
    parsed = parsers.parse_file(folder / "notes.lines")
    assert "second line" in parsed.body
    scanned = scan_sources([folder])
    assert [f.source for f in scanned.files] == ["notes.lines"]


def test_a_plugin_composer_gets_the_settings(plugin: Path) -> None:
    from veracity.kb.composing import LLMOptions, make_composer

    composer = make_composer(LLMOptions(composer="echo", model="m"), {"base_url": "http://x"})
    assert composer is not None and composer.name == "echo"
    assert composer.values == {"base_url": "http://x", "model": "m"}  # type: ignore[attr-defined]


def test_a_plugin_that_does_not_load_is_named_where_it_is_used(plugin: Path) -> None:
    from veracity.cli.main import main
    from veracity.parse.ocr import OcrSettings, ocr_engine

    settings = OcrSettings(engine="broken")  # a registered name
    with pytest.raises(
        ConfigError, match=r"OCR engine 'broken' .*from fake-veracity-plugin.* could not be loaded"
    ):
        ocr_engine(settings)
    with pytest.raises(
        ConfigError, match="unknown OCR engine 'nope'; valid values: broken, rapidocr, tesseract"
    ):
        OcrSettings(engine="nope")
    result = CliRunner().invoke(main, ["plugins", "--check"])
    assert result.exit_code == 1
    assert "broken" in result.output and "FAILS TO LOAD" in result.output
    assert "tiny" in result.output and "not used: a built-in holds this name" in result.output
