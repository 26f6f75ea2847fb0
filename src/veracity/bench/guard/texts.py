"""What every source of the guard's training data is made of: a labelled text
(:class:`GuardExample`), the data folder's files, and the text helpers the sources share."""

from __future__ import annotations

import gzip
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Final, Literal

from ...text.scripts import HAN
from ..shared import PROJECT_ROOT

MAX_CONTEXT: Final = 1200  # longest context or latent-injection document (characters)
DATA: Final = PROJECT_ROOT / "benchmarks" / "guard_data"
_GERMAN = frozenset("und der die das ist nicht ich du sie wir mit für auf eine einen ein zu von".split())

Label = Literal["attack", "benign"]


@dataclass(frozen=True, slots=True)
class GuardExample:
    """One text and its label; ``kind`` says what it is (style, category, ``embedded:<where>``)."""

    example_id: str
    source: str
    language: str
    text: str
    label: Label
    kind: str


def guard_example(
    source: str, key: object, language: str, text: str, label: Label, kind: str
) -> GuardExample:
    """An example of ``source`` whose id is ``<source>:<key>``."""
    return GuardExample(f"{source}:{key}", source, language, text, label, kind)


def data_bytes(rel: str) -> bytes:
    """A guard data file's bytes (gunzipped); a missing one says how to collect it."""
    path = DATA / rel
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not collected (benchmarks/guard_data/collect.sh, SOURCES.md)")
    raw = path.read_bytes()
    return gzip.decompress(raw) if rel.endswith(".gz") else raw


def data_lines(rel: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data_bytes(rel).decode("utf-8").splitlines() if line.strip()]


def norm(text: str) -> str:
    """NFKC, case folded, whitespace collapsed: what "the same text" means here."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def guess_language(text: str) -> str:
    """``zh`` for mostly-CJK text, ``de`` for text with German function words, else ``en``."""
    if len(HAN.findall(text)) >= max(5, len(text) // 10):
        return "zh"
    return "de" if len(set(re.findall(r"[a-zäöüß]+", text.lower())) & _GERMAN) >= 3 else "en"


def clip(text: str, limit: int = MAX_CONTEXT) -> str:
    """``text`` cut to ``limit`` characters at the last line end, else sentence end, else space."""
    text = text.strip()
    if len(text) > limit:
        for stop in ("\n", "。", ". ", "！", "？", " "):
            if (at := text.rfind(stop, 0, limit)) > limit // 2:
                return text[: at + len(stop)].strip()
    return text[:limit]
