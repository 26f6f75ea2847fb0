"""What the adapters share: importing an optional framework with a clear message, and
the governed answer as plain data."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from ..model.errors import ConfigError
from ..pipeline.outcome import Answer
from ..pipeline.render import answer_dict


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise ``ConfigError`` with the ``pip install`` line of ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(
            f"this adapter needs {module.split('.')[0]}: pip install 'veracity[{extra}]'"
        ) from exc


def governed(answer: Answer) -> dict[str, Any]:
    """The answer as the asker sees it: status, claims, citations, missing facts, reasons."""
    return answer_dict(answer)
