"""Real text as negatives for the injection fit: encyclopedia paragraphs from tuning splits.

The benchmark's benign templates are hard negatives written to look like orders; the
pages a knowledge base really holds are mostly plain prose, and a weight fitted on
templates alone can trip on it ("未公开" read as a request to disclose a secret, a
sentence about a law that "overrides any rule"). The fit therefore also reads the
paragraphs of the public reading-comprehension sets' *tuning* splits, all of them
benign: SQuAD 2.0 half-dev articles 1–8 (file order, the #10 tuning articles) and
CMRC 2018 trial. The reporting splits (SQuAD articles 9–16, CMRC dev, DRCD) are never
read here; ``benchmarks/bench_injection_real_text.py`` measures on them.

The paragraphs themselves are not shipped: ``real_windows.json`` holds, per paragraph,
the feature sets of its sentence windows that carry any feature (names only, no text),
with the digest of the source text, so the fit and its test run without the datasets.
The features depend on the cue words, so a change to them needs a rewrite:

    python -m veracity.bench.injection.real_text --datasets ../shared/datasets
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from ...pipeline.injection.signals import Window, windows

WINDOWS_FILE: Final = Path(__file__).with_name("real_windows.json")
# (file under the datasets folder, how many articles from the start; None: all)
TUNING_SOURCES: Final = (
    ("squad2_dev_half/original/dev-v2.0.json.gz", 8),
    ("cmrc2018/original/cmrc2018_trial.json", None),
)

TUNING_SOURCES_NAMES: Final = tuple(f"{name} (articles 1-{n})" if n else name for name, n in TUNING_SOURCES)


def paragraphs(path: Path, first: int = 0, stop: int | None = None) -> Iterator[str]:
    """Every paragraph (``context``) of articles ``first``…``stop`` of a SQuAD-format file, in file order."""
    gz = path.suffix == ".gz"
    with gzip.open(path, "rt", encoding="utf-8") if gz else path.open(encoding="utf-8") as f:
        data = json.load(f)["data"]
    for article in data[first:stop]:
        for paragraph in article["paragraphs"]:
            yield paragraph["context"]


def tuning_paragraphs(datasets: Path) -> Iterator[str]:
    """Every paragraph of the tuning sources, in file order."""
    for name, articles in TUNING_SOURCES:
        yield from paragraphs(datasets / name, 0, articles)


def featured_windows(text: str) -> list[list[str]]:
    """The feature names of each window of ``text`` that has any, in window order."""
    return [sorted(w.features) for w in windows(text) if w.features]


def build(datasets: Path) -> dict[str, Any]:
    """The stored form: per paragraph with any featured window, those windows' features."""
    digest = hashlib.sha256()
    paragraphs: list[list[list[str]]] = []
    total = 0
    for text in tuning_paragraphs(datasets):
        total += 1
        digest.update(text.encode("utf-8") + b"\0")
        found = featured_windows(text)
        if found:
            paragraphs.append(found)
    return {
        "sources": list(TUNING_SOURCES_NAMES),
        "text_digest": digest.hexdigest(),
        "paragraphs_total": total,
        "written_by": "python -m veracity.bench.injection.real_text --datasets DIR",
        "paragraphs": paragraphs,
    }


def load(path: Path = WINDOWS_FILE) -> tuple[list[list[Window]], int, str]:
    """The stored paragraphs as window lists, the number of paragraphs read, the text digest."""
    stored = json.loads(path.read_text(encoding="utf-8"))
    groups = [
        [Window(index=i, hidden=False, features=frozenset(names)) for i, names in enumerate(found)]
        for found in stored["paragraphs"]
    ]
    return groups, int(stored["paragraphs_total"]), str(stored["text_digest"])


def main(argv: Sequence[str] | None = None) -> None:
    """Read the tuning paragraphs and write ``real_windows.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, required=True, help="folder holding the shared datasets")
    parser.add_argument("--out", type=Path, default=WINDOWS_FILE, help="default: the file the fit reads")
    args = parser.parse_args(argv)
    missing = [name for name, _ in TUNING_SOURCES if not (args.datasets / name).is_file()]
    if missing:
        parser.error(f"not found under {args.datasets}: {', '.join(missing)}")
    stored = build(args.datasets)
    text = json.dumps(stored, ensure_ascii=False, separators=(",", ":"))
    args.out.write_text(text + "\n", encoding="utf-8")
    print(
        f"wrote {args.out}: {len(stored['paragraphs'])} of {stored['paragraphs_total']} paragraphs "
        "have a window with features"
    )


if __name__ == "__main__":
    main()
