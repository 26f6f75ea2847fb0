"""Question-answering sets for the answer benchmark: paragraphs, questions, gold answers.

A folder in the layout of ``shared/datasets/<name>/beir/<split>/`` (SQuAD 2.0,
CMRC 2018 and DRCD are all converted to it)::

    corpus.jsonl     {"_id", "title", "text"} per paragraph, in the original file order
    queries.jsonl    {"_id", "text"} per question
    qrels/<split>.tsv  question id → the paragraph it was written on
    answers.jsonl    {"_id", "answers": [...], "is_impossible": bool}

*Parts* name which questions a run uses, so tuning and reporting never mix:
``all``, or ``articles:A:B`` — the questions on paragraphs whose article (the
``title``) is the A-th to (B-1)-th distinct title in corpus order. The known
sets have named parts (:data:`NAMED_PARTS`); SQuAD 2.0 half-dev is tuned on its
first 8 articles and reported on its last 8.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..model.errors import ConfigError
from .beir import available_splits, read_jsonl, read_qrels

NAMED_PARTS: Mapping[str, Mapping[str, str]] = {
    "squad2_dev_half": {"tune": "articles:0:8", "report": "articles:8:16"},
}
"""Per data-set folder name: part name → part spec. Other sets use whole splits
(CMRC 2018: tune on ``trial``, report on ``dev``; DRCD: report on ``dev``)."""


@dataclass(frozen=True, slots=True)
class QAItem:
    """One question with its gold paragraph and answers (empty when unanswerable)."""

    question_id: str
    question: str
    paragraph_id: str
    answers: tuple[str, ...]
    impossible: bool


@dataclass(frozen=True, slots=True)
class QASet:
    """Paragraphs (all of the split, in corpus order) and the questions of one part."""

    name: str
    split: str
    part: str
    paragraphs: tuple[tuple[str, str, str], ...]
    """``(paragraph id, title, text)`` in corpus order."""
    items: tuple[QAItem, ...]

    def corpus_digest(self) -> str:
        """sha256 over the paragraphs: the key of a cached knowledge base."""
        digest = hashlib.sha256()
        for paragraph_id, title, text in self.paragraphs:
            digest.update(f"{paragraph_id}\x00{title}\x00{text}\x01".encode())
        return digest.hexdigest()

    def sample(self, count: int | None, seed: int) -> tuple[QAItem, ...]:
        """``count`` items drawn with ``seed`` (all when ``count`` is None), in question-id order."""
        if count is None or count >= len(self.items):
            return self.items
        chosen = random.Random(seed).sample(range(len(self.items)), count)
        return tuple(sorted((self.items[i] for i in chosen), key=lambda item: item.question_id))


def resolve_part(folder: Path, part: str) -> str:
    """A part name of :data:`NAMED_PARTS` → its spec; a spec is returned as is."""
    named = NAMED_PARTS.get(_dataset_name(folder), {})
    if part in named:
        return named[part]
    if part == "all" or part.startswith("articles:"):
        return part
    valid = ", ".join([*named, "all", "articles:A:B"])
    raise ConfigError(f"unknown part {part!r} for {_dataset_name(folder)!r}; valid values: {valid}")


def _dataset_name(folder: Path) -> str:
    return folder.parent.parent.name if folder.parent.name == "beir" else folder.name


def load_qa(folder: str | Path, split: str | None = None, part: str = "all") -> QASet:
    """Load the questions of ``part`` of ``split`` from a QA folder (see the module docstring).

    ``folder`` is either the data-set folder (holding ``beir/<split>/``) or the
    split folder itself. Raises ``ConfigError`` naming what is missing.
    """
    root = Path(folder)
    if (root / "beir").is_dir():
        splits = sorted(p.name for p in (root / "beir").iterdir() if p.is_dir())
        chosen = split or ("dev" if "dev" in splits else (splits[0] if splits else ""))
        if chosen not in splits:
            raise ConfigError(f"{str(root)!r} has no split {chosen!r}; valid values: {', '.join(splits)}")
        root = root / "beir" / chosen
    if not (root / "answers.jsonl").is_file():
        raise ConfigError(
            f"{str(root)!r} has no answers.jsonl; a QA folder holds corpus.jsonl, queries.jsonl, "
            "qrels/<split>.tsv and answers.jsonl (see shared/datasets/README.md)"
        )
    splits = available_splits(root)
    if not splits:
        raise ConfigError(f"{str(root)!r} has no qrels/*.tsv")
    split_name = split if split in splits else splits[0]
    spec = resolve_part(root, part)
    paragraphs = tuple(
        (str(row["_id"]), str(row.get("title") or ""), str(row.get("text") or ""))
        for row in read_jsonl(root / "corpus.jsonl")
    )
    questions = {str(row["_id"]): str(row.get("text") or "") for row in read_jsonl(root / "queries.jsonl")}
    answers = {str(row["_id"]): row for row in read_jsonl(root / "answers.jsonl")}
    qrels = read_qrels(root / "qrels" / f"{split_name}.tsv")
    allowed = _paragraphs_in(paragraphs, spec)
    items = []
    for question_id in sorted(qrels):
        paragraph_id = next(iter(sorted(qrels[question_id])))
        if paragraph_id not in allowed or question_id not in questions:
            continue
        row = answers.get(question_id, {})
        gold = tuple(str(a) for a in row.get("answers", ()) if str(a).strip())
        items.append(
            QAItem(
                question_id=question_id,
                question=questions[question_id],
                paragraph_id=paragraph_id,
                answers=gold,
                impossible=bool(row.get("is_impossible", False)) or not gold,
            )
        )
    if not items:
        raise ConfigError(f"part {part!r} of {str(root)!r} holds no questions")
    return QASet(
        name=_dataset_name(root), split=split_name, part=part, paragraphs=paragraphs, items=tuple(items)
    )


def _paragraphs_in(paragraphs: tuple[tuple[str, str, str], ...], spec: str) -> set[str]:
    if spec == "all":
        return {paragraph_id for paragraph_id, _, _ in paragraphs}
    try:
        _, start, end = spec.split(":")
        low, high = int(start), int(end)
    except ValueError:
        raise ConfigError(f"part {spec!r} is not 'articles:A:B' with whole numbers") from None
    titles = list(dict.fromkeys(title for _, title, _ in paragraphs))
    wanted = set(titles[low:high])
    return {paragraph_id for paragraph_id, title, _ in paragraphs if title in wanted}
