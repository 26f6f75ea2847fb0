"""What the adapters share: importing an optional framework with a clear message, and
the governed answer as plain data."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from ..model.errors import ConfigError, ValidationError
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


def hits_wanted(k: Any) -> int:
    """``k``, the number of chunks a retriever returns, checked (named as the caller named it)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValidationError(f"k is the number of chunks to return, at least 1; got {k!r}", field="k")
    return k


def fixed_roles(roles: str | Sequence[str]) -> str | tuple[str, ...]:
    """The roles an adapter asks with: a string stays one (a role, or comma-separated roles, as
    the knowledge base reads it), never its letters; any other sequence becomes a tuple."""
    return roles if isinstance(roles, str) else tuple(roles)


def governed(answer: Answer) -> dict[str, Any]:
    """The answer as the asker sees it: status, claims, citations, missing facts, reasons."""
    return answer_dict(answer)
