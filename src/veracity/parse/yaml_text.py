"""YAML as metadata is read: safe types only, and no anchors or aliases.

Anchors and aliases (``&a``, ``*a``, merge keys ``<<: *a``) let a 1 KB block
expand to billions of nodes (the "billion laughs"): building or even printing
the value hangs and eats memory. Metadata never needs them, so a block that
uses one is rejected by name before anything is built from it. Parsing is
libyaml's when available (about 9x faster than the pure-Python parser, same
results and safety).

With ``keep_number_text``, numbers remember how they were written
(:class:`WrittenFloat`, :class:`WrittenInt`): YAML reads ``version_min: 3.10``
as the float 3.1, and a field that is text to its author (a version) needs
the ``3.10`` back (:func:`written_text`). Everywhere else they are the numbers
they always were.
"""

from __future__ import annotations

from typing import Any

import yaml

from .errors import IngestError

__all__ = ["WrittenFloat", "WrittenInt", "load_yaml", "written_text", "yaml_problem"]

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Written:
    """A number that remembers the text it was written as (``3.10``, not ``3.1``); mixed in
    before the number type it is."""

    written: str
    plain: float  # the number itself (an int for WrittenInt), for pickling

    def __new__(cls, value: float, written: str) -> Any:
        number = super().__new__(cls, value)  # type: ignore[call-arg]  # the number type's __new__
        number.written, number.plain = written, value
        return number

    def __reduce__(self) -> tuple[type, tuple[float, str]]:
        # the number type's own reduction would rebuild it without its text (workers pickle metadata)
        return type(self), (self.plain, self.written)


class WrittenFloat(_Written, float):
    """A float that remembers the text it was written as (``3.10``, not ``3.1``)."""


class WrittenInt(_Written, int):
    """An int that remembers the text it was written as (``010``, not ``8``)."""


def written_text(value: object) -> str:
    """``value`` as its author wrote it: a number's source text when it kept one, else ``str(value)``."""
    return value.written if isinstance(value, WrittenFloat | WrittenInt) else str(value)


class _NumberTextLoader(_LOADER):  # type: ignore[misc, valid-type]
    """The safe loader whose numbers keep their source text (parsing stays libyaml's)."""


def _float_with_text(loader: Any, node: yaml.ScalarNode) -> WrittenFloat:
    return WrittenFloat(loader.construct_yaml_float(node), node.value)


def _int_with_text(loader: Any, node: yaml.ScalarNode) -> WrittenInt:
    return WrittenInt(loader.construct_yaml_int(node), node.value)


_NumberTextLoader.add_constructor("tag:yaml.org,2002:float", _float_with_text)
_NumberTextLoader.add_constructor("tag:yaml.org,2002:int", _int_with_text)


def _refuse_aliases(text: str, *, source: str, what: str) -> None:
    for event in yaml.parse(text, Loader=_LOADER):
        alias = isinstance(event, yaml.AliasEvent)
        anchor = getattr(event, "anchor", None)
        if alias or anchor:
            mark = f"{'*' if alias else '&'}{anchor}"
            raise IngestError(
                f"{what} uses the YAML {'alias' if alias else 'anchor'} {mark!r}; anchors and aliases "
                "are not allowed in metadata (one can expand to billions of values): write the values out",
                path=source,
            )


def load_yaml(text: str, *, source: str, what: str, keep_number_text: bool = False) -> Any:
    """Load ``text`` (``what`` of ``source``, for messages) with safe types and no anchors or aliases.

    ``keep_number_text`` makes numbers :class:`WrittenFloat` / :class:`WrittenInt`.
    Raises ``IngestError`` for an anchor or alias, ``yaml.YAMLError`` for
    text that is not YAML (callers word that one themselves).
    """
    if "&" in text or "*" in text:  # neither can occur without one of these characters
        _refuse_aliases(text, source=source, what=what)
    return yaml.load(text, Loader=_NumberTextLoader if keep_number_text else _LOADER)


def yaml_problem(exc: yaml.YAMLError, *, first_line: int = 1) -> str:
    """What is wrong with YAML text, on one line, with the line and column where the parser
    stopped (``first_line``: the file's line number of the text's first line, so a front
    matter block names lines of its file). PyYAML's own message spans several lines and names
    ``"<unicode string>"``."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem is None:
        return " ".join(str(exc).split())
    where = f" at line {mark.line + first_line}, column {mark.column + 1}" if mark is not None else ""
    context = getattr(exc, "context", None)
    return f"{problem}{where}" + (f" ({context})" if context else "")
