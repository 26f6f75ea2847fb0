"""Full-text inserts and postings reads with FTS5's default merging against veracity's setting.

An ingest writes the lexical index a batch of chunks per transaction, and FTS5 writes a segment
per transaction and merges segments of one level once ``automerge`` of them exist (FTS5's
default: 4; veracity's tables: :data:`veracity.index.sqlite.fts.FTS_AUTOMERGE`). This builds
the same table both ways in the same process, in alternating order, from a seeded Zipfian corpus
of rows as long as a chunk's tokens, ``--batch`` rows a transaction (an ingest's index batch), and
prints the insert time, the segment count, and the time to read the postings of ``--terms``
terms with :func:`veracity.index.sqlite.fts.read_postings` (the read path of a query), with the
ratios of veracity's setting to the default.

    python benchmarks/bench_fts_merge.py --rows 100000 --runs 3
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from veracity.catalog.connection import connect
from veracity.index.sqlite.fts import FTS_AUTOMERGE, create_fts_table, read_postings

TABLE = "fts1_0123456789abcdef"
FTS5_AUTOMERGE = 4
"""FTS5's own ``automerge`` (https://sqlite.org/fts5.html#the_automerge_configuration_option)."""


def corpus(rows: int, tokens: int, vocabulary: int, seed: int) -> list[str]:
    """``rows`` rows of about ``tokens`` space-joined terms drawn from a Zipf(1.1) vocabulary."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, vocabulary + 1) ** 1.1
    lengths = rng.integers(tokens // 2, tokens * 3 // 2 + 1, size=rows)
    drawn = rng.choice(vocabulary, size=int(lengths.sum()), p=weights / weights.sum())
    words = np.array([f"t{i}" for i in range(vocabulary)], dtype=object)[drawn].tolist()
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    return [" ".join(words[bounds[i] : bounds[i + 1]]) for i in range(rows)]


def build(folder: Path, rows: list[str], batch: int, automerge: int, terms: list[str]) -> dict[str, float]:
    """Insert ``rows`` into a new table merging ``automerge`` segments at a time, then read ``terms``."""
    path = folder / f"fts-{automerge}.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    connection = connect(path)
    try:
        with connection:
            create_fts_table(connection, TABLE)
            connection.execute(f"INSERT INTO {TABLE} ({TABLE}, rank) VALUES ('automerge', {automerge})")
        start = time.perf_counter()
        for first in range(0, len(rows), batch):
            with connection:
                connection.executemany(
                    f"INSERT INTO {TABLE} (rowid, body) VALUES (?, ?)",
                    [(first + i + 1, row) for i, row in enumerate(rows[first : first + batch])],
                )
        inserted = time.perf_counter() - start
        segments = connection.execute(f"SELECT count(DISTINCT segid) FROM {TABLE}_idx").fetchone()[0]
        start = time.perf_counter()
        read_postings(connection, TABLE, terms)
        read = time.perf_counter() - start
    finally:
        connection.close()
    return {"insert_s": inserted, "segments": float(segments), "read_s": read}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows (chunks) to insert")
    parser.add_argument("--tokens", type=int, default=60, help="mean tokens a row")
    parser.add_argument("--vocab", type=int, default=30_000)
    parser.add_argument("--batch", type=int, default=2048, help="rows a transaction (the index batch)")
    parser.add_argument("--terms", type=int, default=1000, help="terms whose postings are read")
    parser.add_argument("--runs", type=int, default=3, help="builds each way, the order alternating")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = corpus(args.rows, args.tokens, args.vocab, args.seed)
    step = max(1, args.vocab // args.terms)
    terms = [f"t{i}" for i in range(0, args.vocab, step)][: args.terms]
    settings = {
        f"FTS5 default ({FTS5_AUTOMERGE})": FTS5_AUTOMERGE,
        f"veracity ({FTS_AUTOMERGE})": FTS_AUTOMERGE,
    }
    found: dict[str, list[dict[str, float]]] = {name: [] for name in settings}
    print(f"{args.rows:,} rows of ~{args.tokens} tokens, {args.batch} a transaction; {len(terms)} terms read")
    print("| run | automerge | insert s | segments | postings read s |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            order = list(settings.items()) if run % 2 == 0 else list(reversed(settings.items()))
            for name, automerge in order:
                result = build(Path(tmp), rows, args.batch, automerge, terms)
                found[name].append(result)
                print(
                    f"| {run + 1} | {name} | {result['insert_s']:.2f} | {int(result['segments'])} "
                    f"| {result['read_s']:.3f} |"
                )
    default, ours = (found[name] for name in settings)
    for key, label in (("insert_s", "insert time"), ("read_s", "postings read time")):
        ratios = [o[key] / d[key] for o, d in zip(ours, default, strict=True)]
        print(f"median ratio, veracity / default, {label}: {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
