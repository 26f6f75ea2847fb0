"""Train the reader and write its model card: ``python -m veracity.bench.reading.train``.

Needs ``veracity[train]`` (PyTorch, CPU build). Steps, all seeded:

1. the training examples (:mod:`veracity.bench.reading.data`: licence-checked, no reporting split);
   a validation share of contexts is held out (by a hash of the context, so no paragraph is in
   both);
2. hard negatives for a share of the answerable questions (:func:`veracity.reader.features.hard_negatives`);
3. windows, fitted from the bundled multilingual-e5-small (first ``--layers`` layers; word table
   frozen, :mod:`veracity.reader.train`);
4. the tuned layers quantized to int8 per row (:func:`veracity.reader.weights.quantize_state_dict`)
   and saved as ``<name>.npz``; the *quantized* reader is what the validation scores measure;
5. the model card ``<name>.json``: base model and its digest, every data file with licence and
   digest, settings, the command, validation scores, the weights' digest.

``--ship`` writes both files into the package (``src/veracity/reader/``); otherwise into ``--out``.
"""

from __future__ import annotations

import hashlib
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from ...reader.e5_file import load_state_dict, read_e5_file
from ...reader.features import MAX_LENGTH, STRIDE, ReadingExample, WindowMaker, hard_negatives, windows
from ...reader.model import MODEL_NAME, Reader
from ...reader.tokenizer import Tokenizer
from ..answers import normalize_answer
from ..shared import PROJECT_ROOT, training_parser
from ..tuned import card_head, card_tail, save_tuned, train_settings, training_arguments, write_card
from .data import DEFAULT_SOURCES, available_sources, manifest, training_examples

SHIPPED = PROJECT_ROOT / "src" / "veracity" / "reader"


def context_hash(context: str) -> int:
    """A stable 32-bit hash of a context (not the seed): what validation and folds split by."""
    return int(hashlib.sha256(context.encode("utf-8")).hexdigest()[:8], 16)


def held_out(context: str, share: float) -> bool:
    """Whether a context belongs to the validation share."""
    return context_hash(context) / 0xFFFFFFFF < share


def validate(reader: Reader, examples: Sequence[ReadingExample]) -> dict[str, Any]:
    """Scores of ``reader`` on held-out examples: for answerable ones, whether the best span is a
    gold answer (normalized) and its answer score; for the rest, the answer score. The AUC says
    how well the answer score tells the two apart (what the answer/abstain threshold relies on)."""
    exact, positives, negatives = 0, [], []
    for example in examples:
        (reading,) = reader.read(example.question, [(example.title.replace("_", " "), example.context)])
        if example.impossible:
            negatives.append(reading.score)
            continue
        said = normalize_answer(example.context[reading.start : reading.end])
        exact += any(said == normalize_answer(text) for text, _ in example.answers)
        positives.append(reading.score)
    return {
        "answerable": len(positives),
        "unanswerable": len(negatives),
        "exact_match": round(exact / len(positives), 4) if positives else None,
        "answer_score_auc": pairwise_auc(positives, negatives),
    }


def reading_examples(tally: Counter[str], sources: Sequence[str] = DEFAULT_SOURCES) -> list[ReadingExample]:
    """The licence-checked training examples of ``sources`` on this machine (:mod:`.data`) as the
    reader's records, counted in ``tally``; says which of them are missing."""
    available = available_sources()
    if missing := [s for s in sources if s not in available]:
        where = "benchmarks/reader_data/SOURCES.md"
        print(f"not here, trained without: {', '.join(missing)} ({where})", file=sys.stderr)
    present = [s for s in sources if s in available]
    return [ReadingExample(**asdict(e)) for e in training_examples(present, tally=tally)]


def pairwise_auc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """The share of (positive, negative) pairs the score orders right (ties: half), 4 decimals;
    ``None`` when either side is empty."""
    pairs = [(p > n) + 0.5 * (p == n) for p in positives for n in negatives]
    return round(float(np.mean(pairs)), 4) if pairs else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = training_parser("veracity.bench.reading.train", __doc__, layers=6, epochs=1.0, batch_tokens=4096)
    parser.add_argument(
        "--negative-share",
        type=float,
        default=0.5,
        help="share of answerable questions that also get a hard negative",
    )
    parser.add_argument(
        "--null-share",
        type=float,
        default=0.35,
        help="share of windows without the answer (other windows of long contexts) kept",
    )
    parser.add_argument("--validation-share", type=float, default=0.04)
    args = training_arguments(parser, argv, MODEL_NAME, "reader")
    if args is None:
        return 2
    from ...reader.train import fit

    started = time.perf_counter()
    tally: Counter[str] = Counter()
    examples = reading_examples(tally)
    if args.limit is not None:
        examples = random.Random(args.seed).sample(examples, min(args.limit, len(examples)))
    validation = [e for e in examples if held_out(e.context, args.validation_share)]
    training = [e for e in examples if not held_out(e.context, args.validation_share)]
    rng = random.Random(args.seed)
    negatives = {
        k: v
        for k, v in sorted(hard_negatives(training, args.seed).items())
        if rng.random() < args.negative_share
    }
    model_file = read_e5_file()
    tokenizer = Tokenizer(model_file.tokenizer)
    maker = WindowMaker(tokenizer, MAX_LENGTH, STRIDE)
    rows = [
        w for w in windows(training, maker, negatives) if w.kind != "null" or rng.random() < args.null_share
    ]
    kinds = Counter(w.kind for w in rows)
    print(
        f"{len(training)} training examples ({len(validation)} held out), {len(rows)} windows {dict(kinds)}, "
        f"{sum(len(w.input_ids) for w in rows)} tokens",
        file=sys.stderr,
    )
    base = load_state_dict(model_file)
    settings = train_settings(args)
    tuned, log = fit(base, rows, settings, pad=tokenizer.pad)
    folder = SHIPPED if args.ship else args.out
    weights_path, weights = save_tuned(tuned, model_file, folder, args.name)
    reader = Reader(
        weights, tokenizer, meta={"eps": model_file.header.eps, "max_length": MAX_LENGTH, "stride": STRIDE}
    )
    scores = {lang: validate(reader, [e for e in validation if e.language == lang]) for lang in ("en", "zh")}
    card = {
        **card_head(
            args.name,
            weights_path,
            "extractive reading (SQuAD 2.0 style): answer span and no-answer score per passage",
            args.layers,
            MAX_LENGTH,
            STRIDE,
        ),
        "training": {
            "settings": asdict(settings),
            "negative_share": args.negative_share,
            "null_share": args.null_share,
            "validation_share": args.validation_share,
            "limit": args.limit,
            "windows": dict(kinds),
            "examples": len(training),
            "counts": dict(sorted(tally.items())),
            "log": log[-5:],
            "seconds": round(time.perf_counter() - started),
        },
        "data": [entry for entry in manifest() if entry["source"] in DEFAULT_SOURCES],
        "validation": scores,
        **card_tail("veracity.bench.reading.train", argv, weights_path),
    }
    write_card(folder, args.name, card, scores)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
