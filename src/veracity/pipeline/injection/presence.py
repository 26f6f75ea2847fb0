"""Whether a cue family occurs in a text at all: the families' patterns rearranged for speed.

Each family's pattern (:data:`~veracity.pipeline.injection.cues.PATTERNS`) opens its fragments
that start with a letter with one word-edge lookbehind. On Chinese text that lookbehind holds at
almost every position, because an ideograph is not a word character, so Python's engine then
tries each of the family's hundred or so Latin fragments there, one after another; it does the
same with the fragments that start with an ideograph. :data:`PRESENCE` puts a lookahead for the
characters the fragments can begin with (read from each parsed fragment,
:func:`first_characters`) in front of each of the two groups; a fragment whose first characters
are not plain to read goes into a third group without it. Most positions then fail at once.

A text holds a match of ``PRESENCE[name]`` exactly when it holds one of ``PATTERNS[name]``:
- the alternatives are the same;
- a lookahead only restates what its fragments' first characters can be;
- whether any alternative matches somewhere does not depend on their order.

Spans can differ, because the order of the alternatives changed. So this is for presence only
(``search`` as a yes/no); spans come from ``PATTERNS``.
"""

from __future__ import annotations

import re
import re._constants as sre  # the parsed form of a pattern: the same module ``re`` compiles with
import re._parser as sre_parse
from collections.abc import Mapping
from typing import Any, Final

from .cues import _BEFORE, FamilyPatterns, _phrases_first, fragment_regex

__all__ = ["PRESENCE", "first_characters"]

Interval = tuple[int, int]


def first_characters(items: Any) -> list[Interval] | None:
    """Code point intervals holding every character a match of the parsed ``items`` can begin
    with; ``None`` when that is not plain to read (an anchor, a lookaround, a category, a negated
    class, a part that may match nothing, a flag)."""
    if not items:
        return None
    op, av = items[0]
    if op is sre.LITERAL:
        return [(av, av)]
    if op is sre.IN:
        found: list[Interval] = []
        for kind, value in av:
            if kind is sre.LITERAL:
                found.append((value, value))
            elif kind is sre.RANGE:
                found.append(value)
            else:  # NEGATE, CATEGORY: not read here
                return None
        return found
    if op is sre.SUBPATTERN:
        _, add_flags, del_flags, sub = av
        return None if add_flags or del_flags else first_characters(sub.data)
    if op is sre.BRANCH:
        found = []
        for alternative in av[1]:
            part = first_characters(alternative.data)
            if part is None:
                return None
            found += part
        return found
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT) and av[0] >= 1:
        return first_characters(av[2].data)
    return None


def _first_of(regex: str) -> list[Interval] | None:
    """:func:`first_characters` of ``regex`` (``None`` under a case-folding flag)."""
    parsed = sre_parse.parse(regex)
    return None if parsed.state.flags & re.IGNORECASE else first_characters(parsed.data)


def _lookahead(intervals: list[Interval]) -> str:
    """``(?=[...])`` for the characters of ``intervals``."""
    parts = sorted(set(intervals))
    members = "".join(
        re.escape(chr(low)) if low == high else f"{re.escape(chr(low))}-{re.escape(chr(high))}"
        for low, high in parts
    )
    return f"(?=[{members}])"


def _guarded(prefix: str, bodies: list[tuple[str, list[Interval] | None]]) -> list[str]:
    """The alternatives ``bodies`` behind ``prefix``: those whose first characters are known in one
    group behind a lookahead for them, the others in a group of their own."""
    known = [(body, first) for body, first in bodies if first is not None]
    unknown = [body for body, first in bodies if first is None]
    groups = []
    if known:
        characters = [interval for _, first in known for interval in first or ()]
        groups.append(prefix + _lookahead(characters) + "(?:" + "|".join(b for b, _ in known) + ")")
    if unknown:
        groups.append(prefix + "(?:" + "|".join(unknown) + ")")
    return groups


def _presence_pattern(fragments: tuple[str, ...]) -> re.Pattern[str]:
    """One family's fragments for presence: see the module docstring."""
    letter_first: list[tuple[str, list[Interval] | None]] = []
    others: list[tuple[str, list[Interval] | None]] = []
    for fragment in _phrases_first(fragments):
        regex, starts_with_letter = fragment_regex(fragment)
        (letter_first if starts_with_letter else others).append((regex, _first_of(regex)))
    return re.compile("|".join(_guarded(_BEFORE, letter_first) + _guarded("", others)))


PRESENCE: Final[Mapping[str, re.Pattern[str]]] = FamilyPatterns(_presence_pattern)
