"""Sentence choice on FAQ pages no reader was trained on: the held-out repositories of
``veracity.bench.reading.faq`` (``HELD_OUT``), read by each chooser named.

    python benchmarks/chooser_faq_heldout.py shipped [PATH/chooser-e5-4l.npz ...] [--others 8]
        [--file FAQ.jsonl]

Per question: its answer sentences (positives) and up to ``--others`` other sentences of its page
(half sharing the most question words, half at random; seeded, the same for every chooser); and
the question over another page's sentences without its answer ("none"). Prints, per chooser and
language, how often the best sentence is a positive, and the AUC of the best logit between
questions over their own page and over another.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from veracity.bench.reading.chooser import example_groups, validate
from veracity.bench.reading.data import faq_records
from veracity.bench.reading.faq import examples, read_records
from veracity.reader.choice import load_chooser, package_chooser
from veracity.reader.e5_file import read_e5_file
from veracity.reader.features import hard_negatives
from veracity.reader.tokenizer import Tokenizer


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("choosers", nargs="+", help="'shipped' or a chooser's .npz (its .json beside it)")
    parser.add_argument("--others", type=int, default=8, help="other sentences of the page per question")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--file", type=Path, help="FAQ pairs (JSON lines) to read instead of the recorded file"
    )
    args = parser.parse_args()
    try:
        records = faq_records() if args.file is None else read_records(args.file)
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    held = list(examples(records, held_out=True))
    if not held:
        print("error: no held-out FAQ pairs", file=sys.stderr)
        return 1
    tokenizer = Tokenizer(read_e5_file().tokenizer)
    rng = random.Random(args.seed)
    others = hard_negatives(held, args.seed)
    groups = [
        g for e in held for g in example_groups(e, tokenizer, args.others, rng, others.get(e.example_id))
    ]
    for name in args.choosers:
        if name == "shipped":
            chooser = package_chooser()
        else:
            path = Path(name)
            chooser = load_chooser(path.stem, path.parent)
        scores = {lang: validate(chooser, [g for g in groups if g.language == lang]) for lang in ("en", "zh")}
        print(json.dumps({"chooser": name, "questions": len(held), **scores}, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
