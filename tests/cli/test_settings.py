"""``veracity settings``: every threshold, budget and limit, read from the source, with its reason."""

from __future__ import annotations

import importlib
import json

from click.testing import CliRunner

from veracity.cli.main import main
from veracity.cli.settings import read_settings


def test_every_setting_says_why_and_has_the_value_the_code_runs_with() -> None:
    settings = read_settings()
    assert len(settings) > 90
    undocumented = [f"{s.module}.{s.name}" for s in settings if not s.why]
    assert undocumented == []  # a new constant needs the docstring under it
    for setting in settings:
        assert getattr(importlib.import_module(setting.module), setting.name) == setting.value, setting


def test_the_command_lists_settings_and_environment_variables() -> None:
    runner = CliRunner()
    listed = runner.invoke(main, ["settings", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = [json.loads(line) for line in listed.output.splitlines()]
    by_name = {(row["module"], row["name"]): row for row in rows}
    bucket = by_name[("veracity.service.core.cache", "BUCKET_SECONDS")]
    assert bucket["value"] == 60 and bucket["kind"] == "number" and "minute" in bucket["why"]
    assert by_name[("veracity.index.model_cache", "CACHE_ENV")]["value"] == "VERACITY_CACHE"
    assert not any(row["name"].startswith("EXIT_") or "FORMAT" in row["name"] for row in rows)
    text = runner.invoke(main, ["settings", "--grep", "replica"])
    assert text.exit_code == 0 and "VERACITY_READER_URL" in text.output
    assert "BUCKET_SECONDS" not in text.output
