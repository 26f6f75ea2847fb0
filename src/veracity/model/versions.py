"""Product versions (``3.2``, ``2.8.1``) and inclusive version ranges."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import VersionRangeError

_VERSION = re.compile(r"^\d+(?:\.\d+)*$")


def parse_version(
    text: str, *, document: str | None = None, field: str = "version"
) -> tuple[int, ...]:
    """Parse a dotted numeric version; raise ``VersionRangeError`` naming the field otherwise."""
    value = str(text).strip()
    if not _VERSION.match(value):
        raise VersionRangeError(
            f"malformed version {text!r}; expected dotted numbers such as '3.2'",
            document=document,
            field=field,
        )
    return tuple(int(part) for part in value.split("."))


def check_range(
    version_min: str | None, version_max: str | None, *, document: str | None = None
) -> None:
    """Raise ``VersionRangeError`` if either bound is malformed or ``min > max``."""
    low = (
        parse_version(version_min, document=document, field="version_min") if version_min else None
    )
    high = (
        parse_version(version_max, document=document, field="version_max") if version_max else None
    )
    if low is not None and high is not None and low[: len(high)] > high:
        raise VersionRangeError(
            f"version range is reversed: {version_min!r} > {version_max!r}",
            document=document,
            field="version_min",
        )


def in_range(target: str, version_min: str | None, version_max: str | None) -> bool:
    """Whether ``target`` lies in the inclusive range; a bound compares on its own precision.

    ``2.8.1`` lies in ``2.8–2.8``; ``3.2`` does not lie in ``3.3–``.
    """
    version = parse_version(target, field="target_version")
    if version_min:
        low = parse_version(version_min, field="version_min")
        if version[: len(low)] < low:
            return False
    if version_max:
        high = parse_version(version_max, field="version_max")
        if version[: len(high)] > high:
            return False
    return True


@dataclass(frozen=True, slots=True)
class RangeWords:
    """How a range open on one side, or on both, is written (``{}`` stands for the bound)."""

    at_least: str
    at_most: str
    unbounded: str


READER_RANGE = RangeWords("{} and later", "up to {}", "")
"""For people reading an answer or a page: ``3.2 and later``, ``up to 2.8``; nothing when unbounded."""
PREFIX_RANGE = RangeWords("≥{}", "≤{}", "全部")
"""For a chunk's context prefix (indexed text, so it never changes): ``≥3.2``, ``≤2.8``, ``全部``."""


def range_label(version_min: str | None, version_max: str | None, words: RangeWords = READER_RANGE) -> str:
    """``2.8–3.1``, or ``3.2`` when both bounds are one version; an open side in ``words``."""
    if version_min and version_max:
        return version_min if version_min == version_max else f"{version_min}–{version_max}"
    if version_min:
        return words.at_least.format(version_min)
    if version_max:
        return words.at_most.format(version_max)
    return words.unbounded
