"""Where a source's governance metadata comes from, and what happens when it is missing.

Layers, highest first; a higher layer wins key by key:

1. the file itself: Markdown front matter, HTML ``<meta name="veracity:FIELD">``;
2. a sidecar YAML file next to it: ``NAME.meta.yaml`` where ``NAME`` is the
   full file name (``guide.pdf.meta.yaml``) or the name without its suffix
   (``guide.meta.yaml``). Both forms are accepted; when both exist the file
   is rejected as ambiguous, so one file never has two competing sources;
3. the ``--metadata`` mapping file (YAML or JSON): ``{key: {field: value}}``
   where a key is a path relative to the ingested folder (POSIX slashes) or a
   glob over such paths (``*`` also crosses ``/``). Every matching glob
   applies in file order, then the exact path on top;
4. defaults: ``id`` = the relative path without its suffix, ``revision`` =
   ``"1"``, ``title`` = the parsed title or the file stem, ``tenant`` = the
   ``--tenant`` option.

Governance fields (``valid_from``, ``status``, ``visibility``, ``trust``) have
no default: a source without them is rejected with a message naming the field
and where to set it. With ``--tenant``, a source that declares another tenant
is rejected rather than silently moved.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from ..model.errors import ValidationError
from .documents import REQUIRED_FIELDS
from .errors import IngestError
from .nodes import ParsedSource

__all__ = ["SIDECAR_SUFFIX", "MetadataMap", "find_sidecar", "resolve_metadata", "sidecar_names"]

SIDECAR_SUFFIX = ".meta.yaml"
_GLOB_CHARS = frozenset("*?[")


def sidecar_names(path: Path) -> tuple[Path, ...]:
    """The sidecar paths that may hold ``path``'s metadata, full-name form first."""
    full = path.with_name(path.name + SIDECAR_SUFFIX)
    short = path.with_name(path.stem + SIDECAR_SUFFIX)
    return (full,) if short == full else (full, short)


def _load_mapping(path: Path, *, what: str) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"cannot read {what}: {exc}", path=str(path)) from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise IngestError(f"{what} is not valid {path.suffix[1:].upper()}: {exc}", path=str(path)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise IngestError(f"{what} must be a mapping of field: value", path=str(path))
    return data


def find_sidecar(path: Path) -> Path | None:
    """The sidecar of ``path`` if exactly one exists; two sidecars raise ``IngestError``."""
    found = [candidate for candidate in sidecar_names(path) if candidate.is_file()]
    if len(found) > 1:
        raise IngestError(
            f"two sidecar files: {found[0].name} and {found[1].name}; keep one", path=str(path)
        )
    return found[0] if found else None


@dataclass(frozen=True, slots=True)
class MetadataMap:
    """A ``--metadata`` file: ordered ``(key or glob, metadata)`` entries."""

    entries: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    source: str = "<none>"

    @classmethod
    def load(cls, path: Path | str) -> MetadataMap:
        """Read a YAML or JSON mapping file; ``IngestError`` if it is not ``{key: {...}}``."""
        path = Path(path)
        data = _load_mapping(path, what="metadata file")
        entries = []
        for key, value in data.items():
            if not isinstance(value, dict):
                raise IngestError(
                    f"entry {key!r} must map to a mapping of field: value, got {value!r}",
                    path=str(path),
                )
            entries.append((_clean_key(str(key)), value))
        return cls(tuple(entries), str(path))

    def lookup(self, relative: str) -> dict[str, Any]:
        """Metadata for a relative path: matching globs in order, then the exact key."""
        merged: dict[str, Any] = {}
        exact: Mapping[str, Any] = {}
        for key, value in self.entries:
            if key == relative:
                exact = value
            elif _GLOB_CHARS & set(key) and fnmatch.fnmatchcase(relative, key):
                merged.update(value)
        merged.update(exact)
        return merged


def _clean_key(key: str) -> str:
    key = key.replace("\\", "/")
    while key.startswith("./"):
        key = key[2:]
    return key


def _where(path: Path, mapping: MetadataMap | None) -> str:
    names = " or ".join(candidate.name for candidate in sidecar_names(path))
    places = [f"a sidecar file {names}"]
    if path.suffix.lower() in (".md", ".markdown"):
        places.insert(0, "the front matter")
    places.append(f"the metadata file {mapping.source}" if mapping else "a --metadata file")
    return ", ".join(places[:-1]) + " or " + places[-1]


def resolve_metadata(
    path: Path,
    parsed: ParsedSource,
    *,
    relative: str | None = None,
    tenant: str | None = None,
    mapping: MetadataMap | None = None,
) -> dict[str, Any]:
    """Merge the metadata layers for ``path`` (see the module docstring) and check them.

    Raises ``ValidationError`` naming the missing field and where it can be
    set, ``IngestError`` for an unreadable or ambiguous sidecar, and for a
    tenant that contradicts ``tenant``.
    """
    relative = _clean_key(relative or path.name)
    defaults: dict[str, Any] = {
        "id": str(PurePosixPath(relative).with_suffix("")),
        "revision": "1",
        "title": parsed.title or path.stem,
        "tenant": tenant,
    }
    sidecar_path = find_sidecar(path)
    sidecar = _load_mapping(sidecar_path, what="sidecar metadata") if sidecar_path else {}
    layers = (defaults, mapping.lookup(relative) if mapping else {}, sidecar, parsed.metadata)
    merged: dict[str, Any] = {}
    for layer in layers:
        merged.update({key: value for key, value in layer.items() if value not in (None, "")})
    document = str(merged.get("id") or relative)
    declared = str(merged.get("tenant") or "").strip()
    if tenant is not None and declared != tenant:
        raise ValidationError(
            f"declares tenant {declared!r} but is being loaded for tenant {tenant!r}; "
            "fix its metadata or load it for its own tenant",
            document=document,
            field="tenant",
        )
    for name in REQUIRED_FIELDS:
        if merged.get(name) in (None, ""):
            raise ValidationError(
                f"required field is missing; set it in {_where(path, mapping)}",
                document=document,
                field=name,
            )
    return merged
