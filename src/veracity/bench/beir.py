"""Load a BEIR-format retrieval folder: corpus, queries and the qrels of one split.

A BEIR folder holds::

    corpus.jsonl (or corpus.jsonl.gz)   {"_id", "title", "text", ...} per line
    queries.jsonl (or .jsonl.gz)        {"_id", "text", ...} per line
    qrels/<split>.tsv                   query-id <TAB> corpus-id <TAB> score, header line first

A document's retrieval text is ``title + " " + text`` (the "flat" view that the
BEIR paper and Anserini's flat regression index). Only queries of the chosen
split that have at least one judged-relevant document (score > 0) are kept;
that is what trec_eval, ranx and BEIR average over.

Every problem raises :class:`veracity.model.errors.ConfigError` naming the folder
and the file, and saying what a BEIR folder must hold.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.errors import ConfigError

_LAYOUT = (
    "a BEIR folder holds corpus.jsonl[.gz], queries.jsonl[.gz] and qrels/<split>.tsv "
    "(query-id, corpus-id, score)"
)


@dataclass(frozen=True)
class BeirDataset:
    """One split of a BEIR folder, ready to benchmark.

    ``corpus`` maps a document id to its retrieval text (title + text);
    ``titles`` and ``texts`` keep the two fields apart. ``queries`` holds only
    the split's queries with at least one relevant document; ``qrels`` maps a
    query id to ``{doc id: grade}`` with grades > 0 only.
    """

    name: str
    split: str
    corpus: Mapping[str, str]
    titles: Mapping[str, str]
    texts: Mapping[str, str]
    queries: Mapping[str, str]
    qrels: Mapping[str, Mapping[str, int]]

    def corpus_digest(self) -> str:
        """sha256 over ids and retrieval texts in id order: the key of cached embeddings."""
        digest = hashlib.sha256()
        for doc_id in sorted(self.corpus):
            digest.update(doc_id.encode("utf-8") + b"\x00")
            digest.update(self.corpus[doc_id].encode("utf-8") + b"\x01")
        return digest.hexdigest()

    def describe(self) -> dict[str, Any]:
        """Counts, for reports."""
        return {
            "name": self.name,
            "split": self.split,
            "documents": len(self.corpus),
            "queries": len(self.queries),
            "qrels": sum(len(judged) for judged in self.qrels.values()),
        }


def _find(folder: Path, stem: str) -> Path:
    for name in (stem, stem + ".gz"):
        path = folder / name
        if path.is_file():
            return path
    raise ConfigError(f"{str(folder)!r} has no {stem} (nor {stem}.gz); {_LAYOUT}")


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Rows of a ``.jsonl`` or ``.jsonl.gz`` file; ``ConfigError`` on a bad line."""
    opener: Any = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise ConfigError(f"{str(path)!r} line {number} is not JSON: {exc}") from None
                if not isinstance(row, dict) or not isinstance(row.get("_id"), str | int):
                    raise ConfigError(f"{str(path)!r} line {number} has no '_id'; {_LAYOUT}")
                yield row
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {str(path)!r}: {exc}") from None


def available_splits(folder: Path) -> list[str]:
    """Split names with a ``qrels/<split>.tsv`` file, sorted."""
    qrels_dir = Path(folder) / "qrels"
    return sorted(path.stem for path in qrels_dir.glob("*.tsv")) if qrels_dir.is_dir() else []


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``{query id: {doc id: grade}}`` with grades > 0 from a BEIR qrels file."""
    qrels: dict[str, dict[str, int]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {str(path)!r}: {exc}") from None
    for number, line in enumerate(lines, start=1):
        fields = line.split("\t")
        if not line.strip() or (number == 1 and fields[0] == "query-id"):
            continue
        if len(fields) != 3:
            raise ConfigError(
                f"{str(path)!r} line {number}: expected 3 tab-separated fields, got {len(fields)}"
            )
        try:
            grade = int(float(fields[2]))
        except ValueError:
            raise ConfigError(f"{str(path)!r} line {number}: score {fields[2]!r} is not a number") from None
        if grade > 0:
            qrels.setdefault(fields[0], {})[fields[1]] = grade
    return qrels


def load_beir(folder: str | Path, split: str = "test", *, name: str | None = None) -> BeirDataset:
    """Load ``split`` of the BEIR folder ``folder``.

    Raises ``ConfigError`` when the folder is missing a file, the split does
    not exist (the message lists the splits that do), a line is malformed, or
    a qrels entry names a document that is not in the corpus.
    """
    root = Path(folder)
    if not root.is_dir():
        raise ConfigError(f"{str(root)!r} is not a folder; {_LAYOUT}")
    splits = available_splits(root)
    if not splits:
        raise ConfigError(f"{str(root)!r} has no qrels/*.tsv; {_LAYOUT}")
    if split not in splits:
        raise ConfigError(f"{str(root)!r} has no split {split!r}; valid values: {', '.join(splits)}")
    corpus_path = _find(root, "corpus.jsonl")
    queries_path = _find(root, "queries.jsonl")
    qrels = read_qrels(root / "qrels" / f"{split}.tsv")
    titles: dict[str, str] = {}
    texts: dict[str, str] = {}
    for row in read_jsonl(corpus_path):
        doc_id = str(row["_id"])
        titles[doc_id] = str(row.get("title") or "")
        texts[doc_id] = str(row.get("text") or "")
    if not texts:
        raise ConfigError(f"{str(corpus_path)!r} holds no documents")
    missing = sorted({d for judged in qrels.values() for d in judged} - texts.keys())
    if missing:
        raise ConfigError(
            f"qrels/{split}.tsv names {len(missing)} documents not in the corpus, e.g. {missing[0]!r}"
        )
    queries = {
        str(row["_id"]): str(row.get("text") or "")
        for row in read_jsonl(queries_path)
        if str(row["_id"]) in qrels
    }
    unknown = sorted(qrels.keys() - queries.keys())
    if unknown:
        raise ConfigError(
            f"qrels/{split}.tsv names {len(unknown)} queries not in {queries_path.name}, e.g. {unknown[0]!r}"
        )
    corpus = {doc_id: f"{titles[doc_id]} {texts[doc_id]}".strip() for doc_id in texts}
    return BeirDataset(
        name=name or _dataset_name(root),
        split=split,
        corpus=corpus,
        titles=titles,
        texts=texts,
        queries=queries,
        qrels={query_id: qrels[query_id] for query_id in sorted(qrels)},
    )


def _dataset_name(root: Path) -> str:
    """``scifact`` for ``…/scifact``; ``cmrc2018/beir/dev`` for a nested view."""
    parts = root.resolve().parts
    if "beir" in parts[-3:]:
        at = len(parts) - 1 - parts[::-1].index("beir")
        return "/".join(parts[at - 1 :])
    return root.name


def restrict(dataset: BeirDataset, doc_ids: set[str], query_ids: list[str], *, name: str) -> BeirDataset:
    """``dataset`` cut to ``doc_ids`` and ``query_ids`` (queries keep only judgments inside ``doc_ids``).

    Queries left with no relevant document are dropped.
    """
    qrels = {q: {d: g for d, g in dataset.qrels[q].items() if d in doc_ids} for q in query_ids}
    qrels = {q: judged for q, judged in qrels.items() if judged}
    return BeirDataset(
        name=name,
        split=dataset.split,
        corpus={d: t for d, t in dataset.corpus.items() if d in doc_ids},
        titles={d: t for d, t in dataset.titles.items() if d in doc_ids},
        texts={d: t for d, t in dataset.texts.items() if d in doc_ids},
        queries={q: dataset.queries[q] for q in qrels},
        qrels=qrels,
    )


def subset(
    dataset: BeirDataset,
    query_ids: list[str],
    extra_docs: int,
    *,
    seed: int = 0,
    keep_docs: set[str] | frozenset[str] = frozenset(),
) -> BeirDataset:
    """A smaller dataset: the given queries, every document they judge, ``keep_docs``, plus others.

    ``extra_docs`` other documents are a seeded random sample
    (``random.Random(seed)``) of the rest of the corpus, so the slice is the
    same on every run.
    """
    import random

    keep_queries = [q for q in query_ids if q in dataset.queries]
    judged = {d for q in keep_queries for d in dataset.qrels[q]} | (set(keep_docs) & dataset.corpus.keys())
    others = sorted(dataset.corpus.keys() - judged)
    random.Random(seed).shuffle(others)
    docs = judged | set(others[: max(0, extra_docs)])
    return restrict(dataset, docs, keep_queries, name=f"{dataset.name}[{len(keep_queries)}q/{len(docs)}d]")
