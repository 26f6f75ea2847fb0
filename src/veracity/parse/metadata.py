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

Strict (no :class:`GovernanceDefaults`): the governance fields ``tenant``,
``valid_from``, ``status``, ``visibility`` and ``trust`` must be given; a
source without them is rejected with a message naming *every* missing field
and where to set it. With :class:`GovernanceDefaults` (a folder of plain
docs), each missing one takes its documented default and is recorded in
``defaulted``: ``tenant`` = the knowledge base's default tenant, ``status:
active``, ``visibility: public``, ``trust: official``, ``valid_from`` = the
file's modification time to the minute (never later than now), and ``revision`` (when no
layer gives one) is numbered by the knowledge base; ``language`` (not a
governance field) is guessed from the text. Either way, with
``--tenant`` a source that declares another tenant is rejected rather than
silently moved.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, Final

import yaml

from ..model.errors import ValidationError
from ..text.scripts import CJK_RANGES
from .documents import REQUIRED_FIELDS
from .errors import IngestError
from .nodes import ParsedSource
from .yaml_text import WrittenFloat, load_yaml, yaml_problem

__all__ = [
    "DEFAULTED_FIELDS",
    "SIDECAR_SUFFIX",
    "GovernanceDefaults",
    "MetadataMap",
    "ResolvedMetadata",
    "find_sidecar",
    "guess_language",
    "resolve_metadata",
    "resolve_source_metadata",
    "sidecar_names",
]

SIDECAR_SUFFIX = ".meta.yaml"
_GLOB_CHARS = frozenset("*?[")


def sidecar_names(path: Path) -> tuple[Path, ...]:
    """The sidecar paths that may hold ``path``'s metadata, full-name form first."""
    full = path.with_name(path.name + SIDECAR_SUFFIX)
    short = path.with_name(path.stem + SIDECAR_SUFFIX)
    return (full,) if short == full else (full, short)


def _float_with_text(written: str) -> WrittenFloat:
    return WrittenFloat(float(written), written)


def _load_mapping(path: Path, *, what: str) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"cannot read {what}: {exc}", path=str(path)) from None
    try:
        is_json = path.suffix.lower() == ".json"
        data = (
            json.loads(text, parse_float=_float_with_text)
            if is_json
            else load_yaml(text, source=str(path), what=what, keep_number_text=True)
        )
    except json.JSONDecodeError as exc:
        raise IngestError(f"{what} is not valid JSON: {exc}", path=str(path)) from None
    except yaml.YAMLError as exc:
        raise IngestError(f"{what} is not valid YAML: {yaml_problem(exc)}", path=str(path)) from None
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
    _globs: tuple[tuple[str, Mapping[str, Any]], ...] = field(init=False, repr=False, compare=False)
    _exact: dict[str, Mapping[str, Any]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # a map with one exact entry per file (veracity sync writes such maps) is looked up in
        # constant time per file, the globs alone walked in order
        object.__setattr__(self, "_globs", tuple((k, v) for k, v in self.entries if _GLOB_CHARS & set(k)))
        object.__setattr__(self, "_exact", dict(self.entries))

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
        for key, value in self._globs:
            if key != relative and fnmatch.fnmatchcase(relative, key):
                merged.update(value)
        merged.update(self._exact.get(relative, {}))
        return merged

    def unmatched_keys(self, relatives: Iterable[str]) -> tuple[str, ...]:
        """The keys, in file order, that :meth:`lookup` applies to none of ``relatives``.

        Such a key governs nothing: most often a folder written without a glob
        (``internal/`` where ``internal/**`` was meant), which its author needs to hear of.
        """
        present = {_clean_key(relative) for relative in relatives}
        return tuple(key for key, _ in self.entries if not _matches_any(key, present))


def _matches_any(key: str, relatives: set[str]) -> bool:
    if key in relatives:
        return True
    if not _GLOB_CHARS & set(key):
        return False
    pattern = re.compile(fnmatch.translate(key))  # fnmatchcase's own translation, compiled once per key
    return any(pattern.match(relative) for relative in relatives)


DEFAULTED_FIELDS: Final = ("tenant", "revision", "valid_from", "status", "visibility", "trust")
"""The fields :class:`GovernanceDefaults` can fill, in the order summaries list them."""


@dataclass(frozen=True, slots=True)
class GovernanceDefaults:
    """Documented defaults for sources that leave governance fields out (see the module docstring).

    ``tenant`` is the knowledge base's default tenant; ``None`` leaves a
    missing tenant missing (rejected).
    """

    tenant: str | None = None
    status: str = "active"
    visibility: str = "public"
    trust: str = "official"

    def values(self, path: Path) -> dict[str, Any]:
        """The default of every field in :data:`DEFAULTED_FIELDS` for the file ``path``."""
        return {
            "tenant": self.tenant,
            "revision": "1",
            "valid_from": modified_at(path),
            "status": self.status,
            "visibility": self.visibility,
            "trust": self.trust,
        }


VALID_FROM_SECONDS: Final = 60
"""A defaulted ``valid_from`` is the file's modification time floored to this many seconds. A
service resolves "now" to the start of its minute (``veracity.service.core.cache.BUCKET_SECONDS``, a
divisor of this), so a file uploaded and asked about within one minute is already valid."""


def modified_at(path: Path) -> datetime:
    """The file's modification time in UTC floored to :data:`VALID_FROM_SECONDS`, never later
    than now (a clock ahead would hide it)."""
    seconds = min(path.stat().st_mtime, datetime.now(UTC).timestamp())
    return datetime.fromtimestamp(int(seconds) // VALID_FROM_SECONDS * VALID_FROM_SECONDS, tz=UTC)


_CJK_RUN = re.compile(f"[{CJK_RANGES}]+")
_LETTER_RUN = re.compile(r"[^\W\d_]+")


def guess_language(body: str) -> str:
    """``zh`` when CJK characters make up a tenth of the letters, else ``en`` (not a governance field)."""
    letters = sum(map(len, _LETTER_RUN.findall(body)))  # runs, not one match per character
    return "zh" if letters and sum(map(len, _CJK_RUN.findall(body))) * 10 >= letters else "en"


@dataclass(frozen=True, slots=True)
class ResolvedMetadata:
    """A source's merged metadata and the fields that took a default (sorted)."""

    values: Mapping[str, Any]
    defaulted: tuple[str, ...] = ()


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
    """Merge the metadata layers for ``path`` strictly (no defaults); see :func:`resolve_source_metadata`."""
    resolved = resolve_source_metadata(path, parsed, relative=relative, tenant=tenant, mapping=mapping)
    return dict(resolved.values)


def resolve_source_metadata(
    path: Path,
    parsed: ParsedSource,
    *,
    relative: str | None = None,
    tenant: str | None = None,
    mapping: MetadataMap | None = None,
    defaults: GovernanceDefaults | None = None,
) -> ResolvedMetadata:
    """Merge the metadata layers for ``path`` (see the module docstring) and check them.

    Raises ``ValidationError`` naming every missing field and where it can be
    set, ``IngestError`` for an unreadable or ambiguous sidecar, and for a
    tenant that contradicts ``tenant``. With ``defaults``, missing governance
    fields take their defaults and are listed in ``defaulted``.
    """
    relative = _clean_key(relative or path.name)
    base: dict[str, Any] = {
        "id": str(PurePosixPath(relative).with_suffix("")),
        "title": parsed.title or path.stem,
        "tenant": tenant,
    }
    if defaults is None:
        base["revision"] = "1"
    sidecar_path = find_sidecar(path)
    sidecar = _load_mapping(sidecar_path, what="sidecar metadata") if sidecar_path else {}
    layers = (base, mapping.lookup(relative) if mapping else {}, sidecar, parsed.metadata)
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
    defaulted: list[str] = []
    if defaults is not None:
        merged.setdefault("language", guess_language(parsed.body))
        fallback = defaults.values(path)
        for name in DEFAULTED_FIELDS:
            if merged.get(name) in (None, "") and fallback[name] not in (None, ""):
                merged[name] = fallback[name]
                defaulted.append(name)
    missing = [name for name in REQUIRED_FIELDS if merged.get(name) in (None, "")]
    if missing:
        also = f" (all missing: {', '.join(missing)})" if len(missing) > 1 else ""
        raise ValidationError(
            f"required field is missing{also}; set it in {_where(path, mapping)}",
            document=document,
            field=missing[0],
        )
    return ResolvedMetadata(merged, tuple(sorted(defaulted)))
