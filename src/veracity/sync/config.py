"""The sources file: which folders, git repositories and websites a knowledge base keeps in step with.

``veracity.yaml`` (or any file given with ``--sources``)::

    sources:
      - name: handbook              # unique; letters, digits, '-', '_'
        folder: ./handbook          # relative to this file
        tenant: acme                # default: the knowledge base's default tenant
        roles: [staff]              # roles the tenant defines, as ingest --roles (public always)
        include: ["**/*.md"]        # globs over the path inside the source (default: every file)
        exclude: ["drafts/**"]
        governance:                 # defaults beneath each document's own front matter and sidecar
          visibility: internal
          allowed_roles: [staff]
          trust: official
          version_min: "3.0"
        on_remove: withdraw         # withdraw (default) | delete: what happens to a document whose file went
        schedule: hourly            # a hint for whoever runs `veracity sync`; shown by `veracity status`
      - name: product-docs
        git: https://git.example.com/docs.git   # a URL or a local path the `git` program can clone
        ref: main                   # a branch, tag or commit (default: the repository's HEAD)
        path: docs                  # only this folder of the repository
      - name: site
        site: https://docs.example.com/          # a start URL; `start:` adds more
        sitemap: https://docs.example.com/sitemap.xml
        max_pages: 500
        delay: 0.5                  # seconds between two requests at least
        max_bytes: 5000000          # a bigger page is reported and left out

A document's governance still comes from its own front matter (or sidecar) first; the
``governance`` block fills what they leave out, beneath the knowledge base's documented defaults.
Everything is checked when the file is read, and an error names the source and the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from ..model.contracts import Status, Trust, Visibility, sha256_hex
from ..model.errors import ValidationError
from ..model.versions import parse_version
from ..parse.documents import parse_moment
from ..parse.errors import IngestError
from ..parse.yaml_text import WrittenFloat, load_yaml, written_text, yaml_problem

__all__ = [
    "DEFAULT_SOURCES_FILE",
    "GOVERNANCE_FIELDS",
    "KINDS",
    "SourceSpec",
    "load_sources",
    "parse_sources",
]

DEFAULT_SOURCES_FILE: Final = "veracity.yaml"
KINDS: Final = ("folder", "git", "site")
GOVERNANCE_FIELDS: Final = (
    "visibility", "allowed_roles", "trust", "status", "version_min", "version_max",
    "valid_from", "valid_until", "language",
)  # fmt: skip
"""The fields a source may default (``id``, ``revision`` and ``tenant`` are each document's own)."""
ON_REMOVE: Final = ("withdraw", "delete")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_COMMON_KEYS: Final = frozenset(
    {"name", "tenant", "roles", "include", "exclude", "governance", "on_remove", "schedule"}
)
_KIND_KEYS: Final = {
    "folder": frozenset({"folder"}),
    "git": frozenset({"git", "ref", "path"}),
    "site": frozenset({"site", "start", "sitemap", "max_pages", "delay", "max_bytes"}),
}
_ENUMS: Final = {"visibility": Visibility, "trust": Trust, "status": Status}


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """One source of the sources file, checked.

    ``location`` is an absolute folder for ``folder``, a URL or absolute path for ``git``,
    the first start URL for ``site``. ``options`` holds the kind's own settings (``ref``,
    ``path``; ``start``, ``sitemap``, ``max_pages``, ``delay``, ``max_bytes``).
    """

    name: str
    kind: str
    location: str
    tenant: str | None = None
    roles: tuple[str, ...] = ()
    """Roles the source's tenant defines (``ingest --roles``): ``allowed_roles`` may name them."""
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    governance: tuple[tuple[str, Any], ...] = ()
    on_remove: str = "withdraw"
    schedule: str | None = None
    options: tuple[tuple[str, Any], ...] = field(default=())

    def option(self, key: str, default: Any = None) -> Any:
        """The kind's setting ``key``, or ``default``."""
        return dict(self.options).get(key, default)

    @property
    def governance_digest(self) -> str:
        """Digest of what this source makes every one of its documents: tenant and governance.

        It enters each file's fingerprint, so changing a source's governance re-reads its files.
        """
        # a float as written: a version 3.1 changed to 3.10 is a change of governance
        values = [
            (name, written_text(value) if isinstance(value, WrittenFloat) else value)
            for name, value in self.governance
        ]
        return sha256_hex(json.dumps([self.tenant, values], sort_keys=True, default=str))


def _fail(message: str, *, path: str, source: str | None = None, key: str | None = None) -> IngestError:
    where = " ".join(
        part for part in (f"source {source!r}" if source else "", f"{key!r}" if key else "") if part
    )
    return IngestError(f"{where}: {message}" if where else message, path=path, field=key)


def _strings(value: Any, *, path: str, source: str, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail("must be a string or a list of strings", path=path, source=source, key=key)
    return tuple(v.strip() for v in value)


def _governance(value: Any, *, path: str, source: str) -> tuple[tuple[str, Any], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise _fail("must be a mapping of field: value", path=path, source=source, key="governance")
    for key, item in value.items():
        if key not in GOVERNANCE_FIELDS:
            raise _fail(
                f"{key!r} is not a field a source can default (one of: {', '.join(GOVERNANCE_FIELDS)}; "
                "id, revision and tenant belong to each document)",
                path=path, source=source, key="governance",
            )  # fmt: skip
        if key in _ENUMS and item not in {e.value for e in _ENUMS[key]}:
            allowed = ", ".join(e.value for e in _ENUMS[key])
            raise _fail(f"{key} must be one of {allowed}, got {item!r}", path=path, source=source, key=key)
        if key == "allowed_roles":
            _strings(item, path=path, source=source, key=key)
        _check_value(key, item, path=path, source=source)
    return tuple(sorted((str(k), v) for k, v in value.items()))


def _check_value(key: str, item: Any, *, path: str, source: str) -> None:
    """Refuse a moment or version every document of the source would be rejected for, now."""
    try:
        if key in ("valid_from", "valid_until"):
            parse_moment(item, document=source, field=key)
        elif key in ("version_min", "version_max"):
            parse_version(written_text(item), field=key)
    except ValidationError as exc:
        raise _fail(exc.reason, path=path, source=source, key=key) from None


def _number(value: Any, *, path: str, source: str, key: str, minimum: float, integer: bool) -> float | int:
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or value < minimum:
        what = "an integer" if integer else "a number"
        raise _fail(f"must be {what} ≥ {minimum:g}, got {value!r}", path=path, source=source, key=key)
    return value


def _site_options(entry: Mapping[str, Any], *, path: str, source: str) -> tuple[tuple[str, Any], ...]:
    start = _strings(entry["site"], path=path, source=source, key="site")
    start += (
        _strings(entry.get("start", []), path=path, source=source, key="start") if "start" in entry else ()
    )
    for url in start:
        if not re.match(r"https?://[^/\s]+", url):
            raise _fail(f"{url!r} is not an http(s) URL", path=path, source=source, key="site")
    options: dict[str, Any] = {"start": tuple(dict.fromkeys(start))}
    if (sitemap := entry.get("sitemap")) is not None:
        options["sitemap"] = _strings(sitemap, path=path, source=source, key="sitemap")[0]
    limits = (("max_pages", 1, True), ("delay", 0, False), ("max_bytes", 1, True))
    for key, minimum, integer in limits:
        if key in entry:
            options[key] = _number(
                entry[key], path=path, source=source, key=key, minimum=minimum, integer=integer
            )
    return tuple(sorted(options.items()))


def _location(kind: str, entry: Mapping[str, Any], base: Path, *, path: str, source: str) -> str:
    raw = entry[kind]
    if kind == "site":
        return str(_strings(raw, path=path, source=source, key="site")[0])
    if not isinstance(raw, str) or not raw.strip():
        raise _fail(
            "must be a path" + (" or URL" if kind == "git" else ""), path=path, source=source, key=kind
        )
    raw = raw.strip()
    if kind == "git" and raw.startswith("-"):  # git would read it as an option
        raise _fail(f"{raw!r} is not a repository (it starts with '-')", path=path, source=source, key=kind)
    if kind == "git" and (re.match(r"[a-z][a-z0-9+.-]*://", raw) or re.match(r"[\w.-]+@[\w.-]+:", raw)):
        return raw
    return str((base / Path(raw).expanduser()).resolve())


def _source(entry: Any, index: int, base: Path, *, path: str) -> SourceSpec:
    if not isinstance(entry, dict):
        raise _fail(f"entry {index + 1} must be a mapping, got {type(entry).__name__}", path=path)
    name = entry.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise _fail(
            f"entry {index + 1} needs a name of letters, digits, '-' and '_' (at most 64), got {name!r}",
            path=path, key="name",
        )  # fmt: skip
    kinds = [kind for kind in KINDS if kind in entry]
    if len(kinds) != 1:
        raise _fail("needs exactly one of folder, git, site", path=path, source=name)
    kind = kinds[0]
    unknown = sorted(set(entry) - _COMMON_KEYS - _KIND_KEYS[kind])
    if unknown:
        raise _fail(f"unknown keys for a {kind} source: {', '.join(unknown)}", path=path, source=name)
    on_remove = entry.get("on_remove", "withdraw")
    if on_remove not in ON_REMOVE:
        raise _fail(f"must be withdraw or delete, got {on_remove!r}", path=path, source=name, key="on_remove")
    tenant = entry.get("tenant")
    if tenant is not None and (not isinstance(tenant, str) or not tenant.strip()):
        raise _fail("must be a tenant name", path=path, source=name, key="tenant")
    options: tuple[tuple[str, Any], ...] = ()
    if kind == "git":
        options = tuple(
            (key, _strings(entry[key], path=path, source=name, key=key)[0])
            for key in ("path", "ref")
            if key in entry
        )
        for key, value in options:
            if value.startswith("-"):  # git would read it as an option
                raise _fail(f"must not start with '-', got {value!r}", path=path, source=name, key=key)
    elif kind == "site":
        options = _site_options(entry, path=path, source=name)
    schedule = entry.get("schedule")
    return SourceSpec(
        name=name,
        kind=kind,
        location=_location(kind, entry, base, path=path, source=name),
        tenant=tenant.strip() if isinstance(tenant, str) else None,
        roles=_strings(entry["roles"], path=path, source=name, key="roles") if "roles" in entry else (),
        include=_strings(entry["include"], path=path, source=name, key="include")
        if "include" in entry
        else (),
        exclude=_strings(entry["exclude"], path=path, source=name, key="exclude")
        if "exclude" in entry
        else (),
        governance=_governance(entry.get("governance"), path=path, source=name),
        on_remove=str(on_remove),
        schedule=None if schedule is None else str(schedule),
        options=options,
    )


def parse_sources(text: str, *, base: Path, path: str = DEFAULT_SOURCES_FILE) -> tuple[SourceSpec, ...]:
    """The sources of a sources file's ``text`` (relative paths resolved against ``base``), checked."""
    try:
        # numbers keep their text: a governance version_min: 3.10 is version 3.10, not the float 3.1
        data = load_yaml(text, source=path, what="sources file", keep_number_text=True)
    except yaml.YAMLError as exc:
        raise _fail(f"is not valid YAML: {yaml_problem(exc)}", path=path) from None
    if not isinstance(data, dict) or not isinstance(data.get("sources"), list) or not data["sources"]:
        raise _fail("needs a non-empty list under 'sources:'", path=path)
    unknown = sorted(set(data) - {"sources"})
    if unknown:
        raise _fail(f"unknown top-level keys: {', '.join(map(str, unknown))}", path=path)
    specs = tuple(_source(entry, i, base, path=path) for i, entry in enumerate(data["sources"]))
    names = [spec.name for spec in specs]
    if duplicated := sorted({n for n in names if names.count(n) > 1}):
        raise _fail(f"names must be unique; repeated: {', '.join(duplicated)}", path=path)
    return specs


def load_sources(path: Path | str) -> tuple[SourceSpec, ...]:
    """Read and check a sources file; ``IngestError`` names the file, the source and the field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _fail("no such sources file", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(f"cannot be read: {exc}", path=str(path)) from None
    return parse_sources(text, base=path.resolve().parent, path=str(path))
