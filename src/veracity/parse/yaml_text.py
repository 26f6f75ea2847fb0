"""YAML as metadata is read: safe types only, and no anchors or aliases.

Anchors and aliases (``&a``, ``*a``, merge keys ``<<: *a``) let a 1 KB block
expand to billions of nodes (the "billion laughs"): building or even printing
the value hangs and eats memory. Metadata never needs them, so a block that
uses one is rejected by name before anything is built from it. Parsing is
libyaml's when available (about 9x faster than the pure-Python parser, same
results and safety).
"""

from __future__ import annotations

from typing import Any

import yaml

from .errors import IngestError

__all__ = ["load_yaml"]

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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


def load_yaml(text: str, *, source: str, what: str) -> Any:
    """Load ``text`` (``what`` of ``source``, for messages) with safe types and no anchors or aliases.

    Raises ``IngestError`` for an anchor or alias, ``yaml.YAMLError`` for
    text that is not YAML (callers word that one themselves).
    """
    if "&" in text or "*" in text:  # neither can occur without one of these characters
        _refuse_aliases(text, source=source, what=what)
    return yaml.load(text, Loader=_LOADER)
