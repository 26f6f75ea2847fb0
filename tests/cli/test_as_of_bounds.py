"""``--as-of`` at the edges of the calendar: a moment UTC cannot hold is a usage error (exit 2)
that says so, never a traceback; the last day itself is a moment like any other."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from veracity.cli.main import main


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("as-of-bounds") / "demo"
    result = CliRunner().invoke(main, ["init-demo", "--kb", str(folder), "--embedder", "fake"])
    assert result.exit_code == 0, result.output
    return str(folder)


@pytest.mark.parametrize("command", ["search", "ask"])
@pytest.mark.parametrize("moment", ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00"])
def test_a_moment_outside_utc_is_a_usage_error(demo_dir: str, command: str, moment: str) -> None:
    result = CliRunner().invoke(main, [command, "x", "--kb", demo_dir, "--as-of", moment])
    assert result.exit_code == 2, result.output
    assert "--as-of" in result.output and "out of the supported range" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("command", ["search", "ask"])
def test_the_last_day_of_the_calendar_is_a_moment(demo_dir: str, command: str) -> None:
    result = CliRunner().invoke(main, [command, "席位", "--kb", demo_dir, "--as-of", "9999-12-31"])
    assert result.exit_code == 0, result.output
    assert result.exception is None


@pytest.mark.parametrize("command", ["search", "ask"])
def test_text_that_is_not_utf8_is_a_usage_error(demo_dir: str, command: str) -> None:
    # bytes a shell passes that are not UTF-8 reach Python as lone surrogates
    text = b"mid \xff".decode("utf-8", "surrogateescape")
    result = CliRunner().invoke(main, [command, text, "--kb", demo_dir])
    assert result.exit_code == 2, result.output
    assert "the text is not valid UTF-8" in result.output
