"""The settings a knowledge base may change for itself, and the values it stored.

Most thresholds are the engine's and are the same everywhere (``veracity settings`` lists them
with their reasons). The retrieval knobs below are the knowledge base's: how many candidates
each recall channel brings, how many hits an answer reads, the rerank score below which a hit is
not evidence, and the rank fusion's constant. A knowledge base with long documents may want more
candidates; one whose chunks are short may want more hits per answer.

Stored in the ``kb_settings`` table under ``overrides/<name>`` (so they travel with the
knowledge base, SQLite or PostgreSQL), set with ``veracity settings --kb KB --set NAME=VALUE``
and read when the knowledge base is opened. A value is checked against its range when it is
set; a stored value that no longer is valid (a hand-edited table) fails the open with
``ConfigError`` naming it, never silently falls back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from ..catalog.settings import delete_setting, put_setting, settings_under
from ..model.errors import ConfigError
from ..pipeline.retrieve import RetrievalSettings

__all__ = [
    "OVERRIDABLE",
    "Overridable",
    "apply_overrides",
    "checked_value",
    "store_override",
    "stored_overrides",
]

_PREFIX: Final = "overrides/"


@dataclass(frozen=True, slots=True)
class Overridable:
    """One setting a knowledge base may change: its field of :class:`RetrievalSettings`, its type,
    its range (inclusive) and why one would change it."""

    name: str
    field: str
    kind: type
    low: float
    high: float
    why: str

    @property
    def default(self) -> int | float:
        """The value without an override."""
        value: int | float = getattr(RetrievalSettings(), self.field)
        return value


OVERRIDABLE: Final = {
    o.name: o
    for o in (
        Overridable(
            "retrieval.candidate_k", "candidate_k", int, 1, 1000,
            "candidates each recall channel (BM25, dense) brings per trust pool before fusion",
        ),
        Overridable(
            "retrieval.top_k", "top_k", int, 1, 50,
            "hits per trust tier the evidence packet keeps: what an answer may read and cite",
        ),
        Overridable(
            "retrieval.min_score", "min_score", float, 0.0, 10.0,
            "the rerank score below which a hit is not evidence",
        ),
        Overridable(
            "retrieval.rrf_k", "rrf_k", int, 1, 1000,
            "the reciprocal rank fusion constant: higher flattens the channels' rank differences",
        ),
    )
}  # fmt: skip
"""Every setting a knowledge base may override, by name."""


def _overridable(name: str) -> Overridable:
    """The setting ``name``; ``ConfigError`` naming the valid names for any other."""
    setting = OVERRIDABLE.get(name)
    if setting is None:
        raise ConfigError(f"{name!r} cannot be set per knowledge base; valid names: {', '.join(OVERRIDABLE)}")
    return setting


def checked_value(name: str, raw: object) -> int | float:
    """``raw`` (a string from the command line, or a stored number) as the setting ``name``'s
    value; ``ConfigError`` naming the valid names, the type or the range."""
    setting = _overridable(name)
    try:
        value = _number(setting.kind, raw)
    except (TypeError, ValueError):
        wanted = "a whole number" if setting.kind is int else "a number"
        raise ConfigError(f"{name} must be {wanted}, got {raw!r}") from None
    if not setting.low <= value <= setting.high:
        raise ConfigError(f"{name} must be between {setting.low:g} and {setting.high:g}, got {value!r}")
    return value


def _number(kind: type, raw: object) -> int | float:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise TypeError(raw)
    if kind is float:
        value = float(raw)
        if not math.isfinite(value):
            raise ValueError(raw)
        return value
    if isinstance(raw, float):
        if not raw.is_integer():
            raise ValueError(raw)
        return int(raw)
    return int(raw)


def stored_overrides(connection: Any) -> dict[str, int | float]:
    """The overrides the knowledge base stored, each checked (see the module docstring)."""
    if connection is None:
        return {}
    stored = settings_under(connection, _PREFIX)
    return {
        key.removeprefix(_PREFIX): checked_value(key.removeprefix(_PREFIX), v) for key, v in stored.items()
    }


def store_override(connection: Any, name: str, value: int | float | None) -> None:
    """Store (``None``: forget) the override of ``name`` (call inside a writer's transaction)."""
    if value is None:
        delete_setting(connection, _PREFIX + _overridable(name).name)
    else:
        put_setting(connection, _PREFIX + name, checked_value(name, value))


def apply_overrides(settings: RetrievalSettings, overrides: Mapping[str, int | float]) -> RetrievalSettings:
    """``settings`` with ``overrides`` applied; ``ConfigError`` when candidates would be fewer than
    the hits an answer reads."""
    changes: dict[str, Any] = {OVERRIDABLE[name].field: value for name, value in overrides.items()}
    applied = replace(settings, **changes)
    if applied.candidate_k < applied.top_k:
        raise ConfigError(
            f"retrieval.candidate_k ({applied.candidate_k}) is below retrieval.top_k ({applied.top_k}): "
            "an answer could never read the hits it keeps"
        )
    return applied
