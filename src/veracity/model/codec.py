"""Frozen dataclasses to JSON-ready data and back, guided by their type hints.

What one process computed and another reads (an answer in the shared cache
of a service's workers) travels as JSON, never as pickle: reading it runs no
code. The reverse direction follows the annotations, so a tuple comes back a
tuple, an enum its member and a nested record its class; a value that does
not fit its annotation raises ``TypeError`` rather than passing through as
something else.

Supported hints: dataclasses, ``str``/``int``/``float``/``bool``, enums,
``X | None``, ``tuple[X, ...]``, fixed tuples ``tuple[A, B]`` and ``Any``
(kept as read).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from enum import Enum
from typing import Any

__all__ = ["from_plain", "to_plain"]


def to_plain(value: Any) -> Any:
    """``value`` as lists, dicts and scalars (dataclasses by field name, enums by value)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [to_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): to_plain(item) for key, item in value.items()}
    return value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_plain(hint: Any, data: Any) -> Any:
    """``data`` (from :func:`to_plain`, through JSON) rebuilt as ``hint`` says."""
    if hint is Any:
        return data
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if data is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return from_plain(option, data)
            except TypeError as exc:
                errors.append(str(exc))
        raise TypeError(f"{data!r} fits none of {hint}: {'; '.join(errors)}")
    if origin is tuple:
        if not isinstance(data, list | tuple):
            raise TypeError(f"expected a list for {hint}, got {type(data).__name__}")
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_plain(args[0], item) for item in data)
        if len(args) != len(data):
            raise TypeError(f"expected {len(args)} items for {hint}, got {len(data)}")
        return tuple(from_plain(arg, item) for arg, item in zip(args, data, strict=True))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(data, dict):
            raise TypeError(f"expected an object for {hint.__name__}, got {type(data).__name__}")
        hints = _hints(hint)
        known = {f.name for f in dataclasses.fields(hint)}
        unknown = set(data) - known
        if unknown:
            raise TypeError(f"{hint.__name__} has no field {sorted(unknown)[0]!r}")
        return hint(**{name: from_plain(hints[name], value) for name, value in data.items()})
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(data)
    if hint is float and isinstance(data, int | float) and not isinstance(data, bool):
        return float(data)
    if hint in (str, int, bool) and type(data) is hint:
        return data
    raise TypeError(f"{data!r} is not a {getattr(hint, '__name__', hint)}")
