"""False quarantine on real text: encyclopedia paragraphs read as non-official pages.

The injection benchmark's benign half is written from templates; this check reads
text nobody wrote for it. Every paragraph of the public reading-comprehension sets
in ``--datasets`` (SQuAD 2.0 half-dev, CMRC 2018 dev and trial, DRCD dev and test:
Wikipedia in English, simplified and traditional Chinese) is scored by the shipped
detector as a whole page (``injection.detect``), and the script prints how many
would be quarantined if a non-official source carried them. None of them gives
orders to a model, so every one flagged is a false quarantine.

Which parts were used is part of the result. The fit reads SQuAD half-dev
articles 1–8 and CMRC 2018 trial as negatives (``veracity.bench.injection.real_text``),
so the script reports those apart ("fitted on") from the rest ("held out"). DRCD
test was looked at while the detector was developed, before the fit read real
text; SQuAD articles 9–16, CMRC dev and DRCD dev were only ever counted.
``--show N`` prints the first N flagged paragraphs per file with their signals.

``--docs FOLDER...`` reads documentation folders the same way, chunked as
``veracity add`` chunks them, and prints the chunks and pages that would be
quarantined. The fit measures the docs tuning sets (Poetry, MkDocs, FastAPI, Ant
Design: ``veracity.bench.injection.docs_text``) without training on them, and
they were read while the cue words were developed; HTTPX and Vite, the reporting
docs sets, are held out (see ``benchmarks/docs_questions/`` for their commits).

    python benchmarks/bench_injection_real_text.py --datasets ../shared/datasets
    python benchmarks/bench_injection_real_text.py --docs httpx/docs vite-zh

``--guard shipped`` (or a guard's ``.npz``) decides with the trained guard instead of the cue-word
detector. The guard's negatives were SQuAD half-dev articles 1-8, CMRC 2018 trial and DRCD test
(so those are "fitted on" for it), and its threshold was chosen on the docs tuning sets' pages;
SQuAD articles 9-16, CMRC dev, DRCD dev and the HTTPX and Vite docs are held out.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from veracity.bench.injection.docs_text import documentation_pages
from veracity.bench.injection.real_text import paragraphs
from veracity.guard.model import named_guard
from veracity.pipeline.injection import default_model, detect, use_guard
from veracity.reader.runtimes import RUNTIMES

# (label, file, first article, last article + 1 or None)
PARTS = (
    ("fitted on", "squad2_dev_half/original/dev-v2.0.json.gz", 0, 8),
    ("fitted on", "cmrc2018/original/cmrc2018_trial.json", 0, None),
    ("held out", "squad2_dev_half/original/dev-v2.0.json.gz", 8, None),
    ("held out", "cmrc2018/original/cmrc2018_dev.json.gz", 0, None),
    ("held out", "drcd/original/DRCD_dev.json.gz", 0, None),
    ("held out", "drcd/original/DRCD_test.json.gz", 0, None),
)
GUARD_NEGATIVES = {"drcd/original/DRCD_test.json.gz"}
"""Held out from the cue-word detector's fit, but among the guard's training negatives."""


def docs_folder(folder: Path, show: int) -> None:
    """Chunks and pages of a documentation folder that the detector would quarantine."""
    chunks = flagged_chunks = pages = shown = 0
    flagged_pages = set()
    for document, page_chunks in documentation_pages(folder):
        pages += 1
        for chunk in page_chunks:
            chunks += 1
            verdict = detect(chunk.text, chunk.heading_path)
            if verdict.quarantine:
                flagged_chunks += 1
                flagged_pages.add(document.source_id)
                if shown < show:
                    shown += 1
                    print(f"    {verdict.score:.3f} {','.join(verdict.signals)} | {chunk.text[:160]!r}")
    print(
        f"docs {folder}: chunks {flagged_chunks}/{chunks} = {flagged_chunks / max(1, chunks):.4f}, "
        f"pages {len(flagged_pages)}/{pages} = {len(flagged_pages) / max(1, pages):.4f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, help="folder holding the shared datasets")
    parser.add_argument("--docs", type=Path, nargs="*", default=[], help="documentation folders to read")
    parser.add_argument("--show", type=int, default=0, help="flagged paragraphs printed per file")
    parser.add_argument("--limit", type=int, default=None, help="paragraphs read per file (default: all)")
    parser.add_argument("--guard", default="none", help="'none' (cue words), 'shipped' or a guard's .npz")
    parser.add_argument(
        "--guard-runtime",
        choices=["auto", *RUNTIMES],
        default="auto",
        help="what computes the guard's scores",
    )
    args = parser.parse_args()
    if args.datasets is None and not args.docs:
        parser.error("give --datasets, --docs or both")
    guard = named_guard(args.guard, None if args.guard_runtime == "auto" else args.guard_runtime)
    use_guard(guard)
    if guard is not None:
        print(f"guard {guard.version} ({guard.runtime}) threshold {guard.threshold:.4f}")
    else:
        model = default_model()
        print(f"detector threshold {model.threshold:.4f}, fitted on {model.training.get('split', '?')}")
    for folder in args.docs:
        docs_folder(folder, args.show)
    if args.datasets is None:
        return
    totals: dict[str, list[int]] = {}
    for label, name, first, stop in PARTS:
        if guard is not None and name in GUARD_NEGATIVES:
            label = "fitted on"
        path = args.datasets / name
        if not path.exists():
            print(f"{name}: missing, skipped")
            continue
        texts = list(paragraphs(path, first, stop))[: args.limit]
        flagged = [(verdict, text) for text in texts if (verdict := detect(text)).quarantine]
        seen = totals.setdefault(label, [0, 0])
        seen[0] += len(texts)
        seen[1] += len(flagged)
        part = name if first == 0 and stop is None else f"{name} articles {first + 1}-{stop or 'end'}"
        share = len(flagged) / len(texts)
        print(f"{label}: {part}: {len(texts)} paragraphs, quarantined {len(flagged)} = {share:.4f}")
        for verdict, text in flagged[: args.show]:
            print(f"    {verdict.score:.3f} {','.join(verdict.signals)} | {text[:160]!r}")
    for label, (count, flagged_count) in totals.items():
        print(f"{label}, all: {count} paragraphs, quarantined {flagged_count} = {flagged_count / count:.4f}")


if __name__ == "__main__":
    main()
