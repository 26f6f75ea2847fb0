"""Question sets over a documentation folder: questions a new user types, with gold files and strings.

A set is a YAML file (see ``benchmarks/docs_questions/``): the source repository
and commit of the documents (not shipped), the questions' language, and per
question whether the folder answers it, the files that state the answer
(relative to the source's root, which may be one folder above the ingested
one) and short gold strings copied from them. Read by the docs benchmark
(reporting sets) and by the answer-model training (tuning sets).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

EMPHASIS = re.compile(r"[`*_]+")
SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class DocsQuestion:
    """One question; ``answers`` and ``files`` are empty when the folder does not answer it."""

    question_id: str
    question: str
    answerable: bool
    answers: tuple[str, ...]
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DocsQuestionSet:
    """A questions file: where its documents come from, their language, the questions."""

    source: dict[str, Any]
    language: str
    questions: tuple[DocsQuestion, ...]


def load_docs_questions(path: Path) -> DocsQuestionSet:
    """Read a questions YAML file."""
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    questions = tuple(
        DocsQuestion(
            question_id=str(q["id"]),
            question=str(q["question"]),
            answerable=bool(q["answerable"]),
            answers=tuple(str(a) for a in q.get("answers") or ()),
            files=tuple(str(f) for f in q.get("files") or ()),
        )
        for q in spec["questions"]
    )
    return DocsQuestionSet(
        source=dict(spec.get("source") or {}), language=str(spec.get("language", "")), questions=questions
    )


def split_of(question_id: str) -> str:
    """``dev`` or ``heldout``, fixed by the id's digest (sha256 parity of its first byte)."""
    return "dev" if hashlib.sha256(question_id.encode()).digest()[0] % 2 == 0 else "heldout"


def normalized(text: str) -> str:
    """Case, whitespace and Markdown emphasis do not count."""
    return SPACE.sub(" ", EMPHASIS.sub("", text)).strip().casefold()


def source_file(source_id: str, files: Sequence[str]) -> bool:
    """Whether a cited source id (its path without suffix, relative to the ingested folder) is one of
    ``files`` (relative to the source repository's root: the folder may be one below it)."""
    paths = [str(Path(f).with_suffix("")) for f in files]
    return any(p == source_id or p.endswith("/" + source_id) or source_id.endswith("/" + p) for p in paths)


def holds_gold(text: str, answers: Sequence[str]) -> bool:
    """Whether ``text`` holds one of the gold strings (compared :func:`normalized`)."""
    said = normalized(text)
    return any(g and g in said for g in (normalized(a) for a in answers))
