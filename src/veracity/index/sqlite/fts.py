"""Per-tenant FTS5 tables holding the lexical index, and BM25 scoring over their postings.

Each tenant gets its own contentless FTS5 table per index version (``fts<version>_<sha256(tenant)[:16]>``)
whose rows are the chunks' veracity tokens (:func:`veracity.text.tokens.tokenize` of
``index_text(chunk)``) joined by single spaces, keyed by the chunk's integer
key. The tokenizer is FTS5's ``ascii`` with ``. _ - / :`` as token characters:
it splits on spaces only for every token veracity produces (ASCII letters,
digits, those five marks, and CJK ideographs, which ``ascii`` always keeps
inside tokens), so ``3.2``, ``config.max_retries`` and ``--to`` stay whole and
FTS5 holds exactly the tokens veracity made.

Scoring does not use FTS5's ``bm25()``. A query reads each term's postings
(document and term frequency) from an ``fts5vocab`` instance table by exact
term, never through the MATCH query language (so no query text is ever parsed
as syntax), and scores them with numpy using the formula of
:class:`veracity.index.lexical.BM25Index` (``lucene`` variant by default), so
scores equal the in-memory index's. Term statistics come from the allowed
chunks only (or, with ``TermStatistics.INDEX``, from the tenant's whole table):
a chunk the asker may not see never changes the asker's scores.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import apsw
import numpy as np
import numpy.typing as npt

from ...catalog.sql import scalar
from ...model.errors import ValidationError
from ..lexical import BM25Variant, TermStatistics, sum_by_position

__all__ = [
    "FTS_TOKENIZER",
    "Postings",
    "bm25_scores",
    "check_fts_name",
    "check_query_tokens",
    "create_fts_table",
    "drop_fts_table",
    "fts_table_name",
    "posting_positions",
    "read_postings",
    "with_positions",
]

DENSE_SUM_SHARE: Final = 16
"""Query postings above ``1 / DENSE_SUM_SHARE`` of the tenant's chunks are summed in one slot per
chunk (linear) instead of sorted and grouped (``np.unique``, n log n): both give the same sums."""

FTS_TOKENIZER: Final = "ascii tokenchars '._-/:'"
"""FTS5 tokenizer spec: splits veracity's space-joined tokens back into the same tokens."""

FTS_AUTOMERGE: Final = 16
"""Segments of one level an FTS5 table gathers before merging them (FTS5's default: 4). An ingest
commits a segment per batch of chunks; at 16, 100k rows of chunk length insert in 0.77 × the time
and a term's postings read 1.12 × (about +0.01 ms): ``benchmarks/bench_fts_merge.py``, 2 cores,
docs/benchmarks.md."""


def fts_table_name(tenant: str, version: int) -> str:
    """The FTS5 table of ``tenant`` in index ``version``: ``fts<version>_<sha256(tenant)[:16]>``."""
    return f"fts{int(version)}_" + hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:16]


def _vocab_name(table: str) -> str:
    return f"{table}_instances"


_FTS_NAME: Final = re.compile(r"fts[0-9]*_[0-9a-f]{16}")  # "fts_<hash>": version 1 before versions


def check_fts_name(table: str) -> str:
    """Return ``table`` if it is a name :func:`fts_table_name` makes; ``ValueError`` otherwise.

    Table names are spliced into SQL, so every name read back from the database
    passes through here first.
    """
    if not _FTS_NAME.fullmatch(table):
        raise ValueError(f"not an FTS table name made by fts_table_name: {table!r}")
    return table


def create_fts_table(connection: apsw.Connection, table: str) -> None:
    """Create the contentless FTS5 table ``table`` and its ``fts5vocab`` instance view."""
    check_fts_name(table)
    connection.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5("
        f"body, content='', contentless_delete=1, detail=full, "
        f'tokenize="{FTS_TOKENIZER}")'
    )
    connection.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('automerge', {FTS_AUTOMERGE})")
    connection.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {_vocab_name(table)} USING fts5vocab({table}, instance)"
    )


def drop_fts_table(connection: apsw.Connection, table: str) -> None:
    """Drop a tenant's FTS5 table and its vocabulary view."""
    check_fts_name(table)
    connection.execute(f"DROP TABLE IF EXISTS {_vocab_name(table)}")
    connection.execute(f"DROP TABLE IF EXISTS {table}")


@dataclass(frozen=True, slots=True)
class Postings:
    """One term's postings: ascending chunk keys and the term's frequency in each."""

    term: str
    keys: npt.NDArray[np.int64]
    tf: npt.NDArray[np.int64]
    positions: npt.NDArray[np.intp] | None = None
    """Where ``keys`` sit in the tenant's ascending chunk keys (see :func:`with_positions`)."""


def check_query_tokens(query_tokens: Sequence[str]) -> None:
    """``ValidationError`` for one string where a sequence of tokens belongs (read char by char)."""
    if isinstance(query_tokens, str):
        raise ValidationError(
            "query tokens must be a sequence of tokens, not one string", field="query_tokens"
        )


def posting_positions(posting: Postings, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.intp]:
    """Where ``posting``'s keys sit in ``keys`` (a tenant's ascending chunk keys).

    The positions it carries when :func:`with_positions` gave them, else found now.
    ``LookupError`` if a key is not one of ``keys``: the FTS5 table and the index rows disagree.
    """
    if posting.positions is not None:
        return posting.positions
    positions = np.searchsorted(keys, posting.keys)
    if positions.size and (positions[-1] >= keys.size or not np.array_equal(keys[positions], posting.keys)):
        raise LookupError(f"FTS postings of {posting.term!r} name chunks outside the tenant index")
    return positions.astype(np.intp)


def with_positions(posting: Postings, keys: npt.NDArray[np.int64]) -> Postings:
    """``posting`` carrying its positions in ``keys``: found once when a posting list is cached
    rather than by every query that reads it (a frequent term's list at 1M chunks is a ~10 ms
    ``searchsorted``)."""
    return Postings(posting.term, posting.keys, posting.tf, posting_positions(posting, keys))


def read_postings(connection: apsw.Connection, table: str, terms: Sequence[str]) -> list[Postings]:
    """Postings of each distinct term in ``terms`` (sorted by term) from ``table``.

    Terms are bound as parameters and compared for equality with the stored
    terms; a term absent from the table gets empty postings.
    """
    vocab = _vocab_name(check_fts_name(table))
    found: list[Postings] = []
    for term in sorted(set(terms)):
        text = scalar(connection, f"SELECT group_concat(doc) FROM {vocab} WHERE term = ?", (term,))
        if not text:
            found.append(Postings(term, np.empty(0, np.int64), np.empty(0, np.int64)))
            continue
        found.append(Postings(term, *_run_lengths(np.fromstring(text, dtype=np.int64, sep=","))))
    return found


def _run_lengths(occurrences: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Distinct values and their counts; linear when ``occurrences`` is sorted (fts5vocab's order)."""
    if occurrences.size > 1 and not bool((occurrences[1:] >= occurrences[:-1]).all()):
        keys, counts = np.unique(occurrences, return_counts=True)
        return keys.astype(np.int64), counts.astype(np.int64)
    starts = np.flatnonzero(np.concatenate(([True], occurrences[1:] != occurrences[:-1])))
    counts = np.diff(np.append(starts, occurrences.size))
    return occurrences[starts], counts.astype(np.int64)


def _idf(df: float, n: int, variant: BM25Variant) -> float:
    if variant is BM25Variant.LUCENE:
        return math.log1p((n - df + 0.5) / (df + 0.5))
    raise ValueError(f"the SQLite index scores with the lucene variant only, not {variant.value!r}")


def bm25_scores(
    postings: Sequence[Postings],
    query_tokens: Sequence[str],
    *,
    keys: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
    allowed: npt.NDArray[np.bool_],
    k1: float,
    b: float,
    variant: BM25Variant = BM25Variant.LUCENE,
    statistics: TermStatistics = TermStatistics.ALLOWED,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """Positions (into ``keys``) and BM25 scores of allowed chunks that contain a query term.

    ``keys`` are the tenant's chunk keys, ascending; ``lengths`` their token
    counts; ``allowed`` a boolean mask over them. IDF and the average length
    come from the allowed chunks (``TermStatistics.ALLOWED``) or from every
    chunk of the tenant (``TermStatistics.INDEX``). A term repeated in the
    query counts once per occurrence, as in ``BM25Index``. Postings that carry their
    positions (:func:`with_positions`, against these ``keys``) skip finding them.
    """
    n = int(keys.size)
    counts = Counter(query_tokens)
    over_allowed = statistics is TermStatistics.ALLOWED
    counted = int(np.count_nonzero(allowed)) if over_allowed else n
    total_length = float(lengths[allowed].sum()) if over_allowed else float(lengths.sum())
    avgdl = total_length / counted if counted else 0.0
    parts_pos: list[npt.NDArray[np.intp]] = []
    parts_weight: list[npt.NDArray[np.float64]] = []
    for posting in postings:
        if posting.keys.size == 0:
            continue
        positions = posting_positions(posting, keys)
        keep = np.flatnonzero(allowed[positions])
        if keep.size == 0:
            continue
        idf = _idf(float(keep.size if over_allowed else posting.keys.size), counted, variant)
        positions = positions[keep]
        tf = posting.tf[keep].astype(np.float64)
        norm = k1 * (1.0 - b + b * lengths[positions] / (avgdl or 1.0))
        weights = idf * (tf * 1.0) / (tf + norm)
        count = counts[posting.term]
        parts_pos.append(positions)
        parts_weight.append(weights * count if count != 1 else weights)
    positions, scores = sum_by_position(
        parts_pos, parts_weight, n, dense_share=DENSE_SUM_SHARE, all_positive=False
    )
    return positions.astype(np.intp), scores.astype(np.float64)
