"""How a sentence reader does on one cross-fitting fold of the answer models' tuning paragraphs.

Each tuning question of the fold (SQuAD 2.0 half-dev ``tune``, CMRC 2018 ``trial``; fold by
``veracity.bench.reading.chooser.tuning_fold``) is read with every sentence of its paragraph; it
prints, per source, how often the best sentence holds the answer and how well the best logit
tells answerable from unanswerable questions (AUC). Compare the shipped reader with one trained
by ``python -m veracity.bench.reading.chooser --tuning-fold K --out DIR`` on fold K, which that
reader never saw:

    python benchmarks/reader_fold_auc.py 0 shipped
    python benchmarks/reader_fold_auc.py 0 DIR/chooser-e5-4l.npz

Needs the reader's training data (benchmarks/reader_data/SOURCES.md) and ../shared/datasets.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter

from veracity.bench.reading.chooser import ANSWER_MODEL_TUNING, example_groups, tuning_fold, validate
from veracity.bench.reading.train import reading_examples
from veracity.reader.choice import named_chooser
from veracity.reader.e5_file import read_e5_file
from veracity.reader.tokenizer import Tokenizer

ALL_SENTENCES = 1_000
"""Other sentences per group: more than any paragraph holds, so each group is the whole paragraph."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fold", type=int, choices=(0, 1))
    parser.add_argument("reader", help="shipped, or a chooser's .npz (its model card beside it)")
    parser.add_argument("--limit", type=int, default=None, help="the first N questions of each source")
    args = parser.parse_args()
    chooser = named_chooser(args.reader)
    if chooser is None:
        parser.error("name a reader: shipped or a .npz")
    examples = [
        e
        for e in reading_examples(Counter())
        if e.source in ANSWER_MODEL_TUNING and tuning_fold(e.context) == args.fold
    ]
    tokenizer = Tokenizer(read_e5_file().tokenizer)
    rng = random.Random(0)
    scores = {}
    for source in ANSWER_MODEL_TUNING:
        chosen = [example for example in examples if example.source == source][: args.limit]
        groups = [group for e in chosen for group in example_groups(e, tokenizer, ALL_SENTENCES, rng, None)]
        scores[source] = validate(chooser, groups)
    print(json.dumps({"fold": args.fold, "reader": args.reader, **scores}, indent=1))


if __name__ == "__main__":
    main()
