"""Loading a script of ``benchmarks/`` as a module, to test its pure functions."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def benchmark_script(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` imported as the module ``name``."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look the module up while a class is made
    if str(BENCHMARKS) not in sys.path:  # a script imports its siblings, as when it is run
        sys.path.insert(0, str(BENCHMARKS))
    spec.loader.exec_module(module)
    return module
