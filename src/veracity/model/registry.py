"""Named implementations a name on the command line or in a setting picks: embedders, composers,
document parsers and OCR engines.

Veracity's own are named by where they live (``"module:attribute"``), so listing the names — a
command's ``--help``, an error naming the valid values — imports none of them. Another package
adds its own with an entry point in the group ``veracity.<kind>`` (as ``datasette`` and
``sqlite-utils`` take plugins), e.g. in its ``pyproject.toml``::

    [project.entry-points."veracity.embedders"]
    my-model = "my_package.embedding:MyEmbedder"

Its name then appears wherever the built-in names do (``--embedder my-model``), and ``veracity
plugins`` lists it with the distribution it came from. What each kind's object must be is said
where the registry is defined (below); a contract test of that kind checks it. A name is
imported only when it is used; one that fails to import raises ``ConfigError`` naming the
distribution. A plugin never replaces a built-in of the same name: the built-in wins and the
listing says so.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from .errors import ConfigError

__all__ = ["COMPOSERS", "EMBEDDERS", "OCR_ENGINES", "PARSERS", "Registered", "Registry"]

BUILT_IN = "veracity"
"""The origin named for veracity's own implementations."""


@dataclass(frozen=True, slots=True)
class Registered:
    """One name of a registry: where its object lives and which distribution registered it."""

    name: str
    target: str
    origin: str
    shadowed: bool = False
    """A plugin whose name a built-in already holds (it is never used)."""


class Registry(Mapping[str, Any]):
    """The names of one kind, built-ins first (in the order given), then plugins by name.

    A read-only mapping: ``registry[name]`` imports and returns the object; iterating, ``len``
    and ``in`` read the names only.
    """

    def __init__(self, kind: str, singular: str, built_in: Mapping[str, str]) -> None:
        self.kind = kind
        self.singular = singular
        self.group = f"veracity.{kind}"
        self._built_in = dict(built_in)
        self._entries: tuple[Registered, ...] | None = None

    def entries(self) -> tuple[Registered, ...]:
        """Every name with its target and origin, shadowed plugins included (read once a process;
        :meth:`rescan` reads the installed plugins again)."""
        if self._entries is None:
            own = [Registered(name, target, BUILT_IN) for name, target in self._built_in.items()]
            found = sorted(entry_points(group=self.group), key=lambda e: (e.name, e.value))
            plugins = [
                Registered(e.name, e.value, e.dist.name if e.dist else "?", e.name in self._built_in)
                for e in found
            ]
            self._entries = (*own, *plugins)
        return self._entries

    def rescan(self) -> None:
        """Forget the plugins read so far (a package installed since is seen)."""
        self._entries = None

    def names(self) -> tuple[str, ...]:
        """The usable names: built-ins, then plugins (a shadowed plugin is not one)."""
        return tuple(dict.fromkeys(e.name for e in self.entries() if not e.shadowed))

    def origin(self, name: str) -> str:
        """The distribution that registered ``name`` (``veracity`` for a built-in)."""
        return self._entry(name).origin

    def _entry(self, name: str) -> Registered:
        for entry in self.entries():
            if entry.name == name and not entry.shadowed:
                return entry
        raise ConfigError(
            f"unknown {self.singular} {name!r}; valid values: {', '.join(sorted(self.names()))}"
        )

    def __getitem__(self, name: str) -> Any:
        entry = self._entry(name)
        module_name, _, attribute = entry.target.partition(":")
        try:
            found: Any = importlib.import_module(module_name)
            for part in attribute.split(".") if attribute else ():
                found = getattr(found, part)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(
                f"{self.singular} {name!r} ({entry.target}, from {entry.origin}) could not be loaded: {exc}"
            ) from exc
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __contains__(self, name: object) -> bool:
        # a built-in name is known without reading the installed packages' entry points
        return isinstance(name, str) and (name in self._built_in or name in self.names())

    def get(self, name: str, default: Any = None) -> Any:
        """The object registered as ``name``; ``default`` for a name nothing registers (one that
        fails to load still raises ``ConfigError``)."""
        return self[name] if name in self else default


EMBEDDERS = Registry(
    "embedders",
    "embedder",
    {
        "use": "veracity.index.embedders:UniversalSentenceEncoder",
        "e5": "veracity.index.embedders:E5SmallEmbedder",
        "fake": "veracity.index.embedders:FakeEmbedder",
    },
)
"""Dense models: a callable of no arguments returning a ``veracity.index.dense.Embedder``."""

COMPOSERS = Registry(
    "composers",
    "composer",
    {
        "extractive": "veracity.pipeline.composer:ExtractiveComposer",
        "llm": "veracity.kb.composing:llm_composer",
    },
)
"""Who writes an answer's claims: a callable taking the composer settings (a mapping: the
``--llm-*`` options and the knowledge base's stored ones, by name) and the environment (where a
key is read from), returning a ``veracity.pipeline.composer.Composer``. ``extractive`` is the
default and needs no settings."""

PARSERS = Registry(
    "parsers",
    "parser",
    {
        "markdown": "veracity.parse.markdown:parse_markdown",
        "rst": "veracity.parse.rst:parse_rst",
        "text": "veracity.parse.parsers:parse_plain_text",
        "html": "veracity.parse.html:parse_html",
        "pdf": "veracity.parse.parsers:read_pdf",
        "docx": "veracity.parse.parsers:read_docx",
        "image": "veracity.parse.parsers:read_image",
    },
)
"""Document formats by name. A plugin's object is a ``veracity.parse.parsers.DocumentParser`` (or
a class of one, made once): the file suffixes it reads and ``parse(data, source=..., limits=...,
ocr=...)`` returning a ``ParsedSource``. The built-ins are listed for their names;
``veracity.parse.parsers`` reads them itself (a test keeps its tables and these names equal)."""

OCR_ENGINES = Registry(
    "ocr",
    "OCR engine",
    {
        "rapidocr": "veracity.parse.ocr:rapidocr_engine",
        "tesseract": "veracity.parse.ocr:tesseract_engine",
    },
)
"""OCR engines: a callable taking ``(settings, source=...)`` (a ``veracity.parse.ocr.OcrSettings``:
languages, threads) and returning a ``veracity.parse.ocr.OcrEngine``."""
