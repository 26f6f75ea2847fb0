"""Sentence choice on FAQ pages no reader was trained on: the held-out repositories of
``veracity.bench.reading.faq`` (``HELD_OUT``), read by each chooser named.

    python benchmarks/chooser_faq_heldout.py shipped [PATH/chooser-e5-4l.npz ...] [--others 8]
        [--file FAQ.jsonl] [--runtime onnx-int8]

Per question: its answer sentences (positives) and up to ``--others`` other sentences of its page
(half sharing the most question words, half at random; seeded, the same for every chooser); and
the question over another page's sentences without its answer ("none"). Prints, per chooser and
language, how often the best sentence is a positive, and the AUC of the best logit between
questions over their own page and over another.

``--set validation`` reads instead the reading data's held-out paragraphs (``held_out``, the
share every chooser is trained without; the answer models' tuning data left out, as in training),
each question with up to ``--others`` other sentences of its paragraph: a comparison of two
choosers on the same groups, where each card's ``validation`` figures come from groups drawn
apart.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

from veracity.bench.reading.chooser import ANSWER_MODEL_TUNING, example_groups, validate
from veracity.bench.reading.data import faq_records
from veracity.bench.reading.faq import examples, read_records
from veracity.bench.reading.train import held_out, reading_examples
from veracity.reader.choice import load_chooser, package_chooser
from veracity.reader.e5_file import read_e5_file
from veracity.reader.features import hard_negatives
from veracity.reader.runtimes import RUNTIMES
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
    parser.add_argument("--set", choices=("faq", "validation"), default="faq")
    parser.add_argument(
        "--runtime", choices=RUNTIMES, default=None, help="what computes the logits (default: numpy's)"
    )
    parser.add_argument("--validation-share", type=float, default=0.04, help="as the choosers were trained")
    args = parser.parse_args()
    try:
        if args.set == "validation":
            held = [
                e
                for e in reading_examples(Counter())
                if e.source not in ANSWER_MODEL_TUNING and held_out(e.context, args.validation_share)
            ]
        else:
            records = faq_records() if args.file is None else read_records(args.file)
            held = list(examples(records, held_out=True))
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if not held:
        print(f"error: no held-out questions in the {args.set} set", file=sys.stderr)
        return 1
    tokenizer = Tokenizer(read_e5_file().tokenizer)
    others = hard_negatives(held, args.seed)
    for name in args.choosers:
        if name == "shipped":
            chooser = package_chooser()
        else:
            path = Path(name)
            chooser = load_chooser(path.stem, path.parent)
        if args.runtime is not None:
            chooser = chooser.in_runtime(args.runtime)
        rng = random.Random(args.seed)  # the same groups for every chooser, read as it reads them
        groups = [
            group
            for e in held
            for group in example_groups(
                e, tokenizer, args.others, rng, others.get(e.example_id), chooser.context_tokens
            )
        ]
        scores = {lang: validate(chooser, [g for g in groups if g.language == lang]) for lang in ("en", "zh")}
        print(
            json.dumps(
                {"chooser": name, "runtime": chooser.runtime, "set": args.set, "questions": len(held)}
                | scores,
                sort_keys=True,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
