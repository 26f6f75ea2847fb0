"""Train the guard, choose its threshold, write its model card: ``python -m veracity.bench.guard.train``.

Needs ``veracity[train]`` (PyTorch, CPU). Seeded throughout:

1. the training examples (:mod:`veracity.bench.guard.data`: licence-checked; nothing of the injection
   benchmark's test, blind or unread parts), cut into windows; an attack put into a benign page
   labels only the windows that hold it;
2. the bundled multilingual-e5-small's first ``--layers`` layers fine-tuned with a one-logit head
   (word table frozen, :mod:`veracity.reader.train`), quantized to int8 rows;
3. the threshold: the lowest score at which real documentation the guard never saw (the docs
   tuning sets' pages, cut as the reader's data is) is quarantined at most ``--budget`` of the time;
   the held-out attack sets (BIPIA and deepset test, attacks put into held-out pages) are scored
   at it, for the card;
4. ``guard-*.npz`` and ``guard-*.json`` into the package (``--ship``) or ``--out``.
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict

from ...guard.model import MAX_LENGTH, MODEL_NAME, STRIDE, Guard, window_starts
from ...reader.e5_file import load_state_dict, read_e5_file
from ...reader.features import Window
from ...reader.tokenizer import Tokenizer
from ..reading.data import DATA as READER_DATA
from ..reading.data import docs_trees_manifest
from ..shared import PROJECT_ROOT, training_parser
from ..tuned import card_head, card_tail, save_tuned, train_settings, training_arguments, write_card
from . import data
from .calibrate import (
    BUDGET,
    PROMPTING_BUDGET,
    calibration,
    documentation_pages,
    prompting_pages,
    security_pages,
)

SHIPPED = PROJECT_ROOT / "src" / "veracity" / "guard"


def attack_text(example: data.GuardExample, by_id: dict[str, str]) -> str | None:
    """The attack an ``embedded`` example carries (its kind ends with the attack's id)."""
    if not example.kind.startswith("embedded:"):
        return None
    return by_id.get(example.kind.split(":", 3)[3])


def guard_windows(
    examples: Sequence[data.GuardExample], tokenizer: Tokenizer, by_id: dict[str, str]
) -> list[Window]:
    """Training windows: label 1 for a window of an attack (for an attack put into a page, only the
    windows holding at least half of its tokens), 0 otherwise."""
    out = []
    room = MAX_LENGTH - 2
    for example in examples:
        ids, offsets = tokenizer.encode_with_offsets(example.text)
        inserted = attack_text(example, by_id)
        span = None
        if inserted is not None and (at := example.text.find(inserted)) >= 0:
            span = [k for k, (s, e) in enumerate(offsets) if s < at + len(inserted) and e > at]
        for first in window_starts(len(ids), MAX_LENGTH, STRIDE):
            window = ids[first : first + room]
            if example.label == "benign":
                label = 0
            elif span is None:
                label = 1
            else:
                inside = sum(first <= k < first + room for k in span)
                label = int(inside * 2 >= len(span))
            tokens = (tokenizer.bos, *window, tokenizer.eos)
            out.append(Window(example.example_id, example.language, tokens, 1, label, 0, example.label))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = training_parser("veracity.bench.guard.train", __doc__, layers=4, epochs=2.0, batch_tokens=4096)
    parser.add_argument("--budget", type=float, default=BUDGET, help="false quarantine on documentation")
    parser.add_argument(
        "--prompting-budget",
        type=float,
        default=None,
        help="also hold the calibration half of the pages about prompts to this false quarantine when"
        f" choosing the threshold (default: measured only; {PROMPTING_BUDGET} was tried: the guard lost a"
        " third of the attacks, docs/injection-defence.md)",
    )
    parser.add_argument(
        "--add-sources",
        default="",
        help="optional data sources to train on too, comma-separated: "
        + (", ".join(data.OPTIONAL) or "none at present"),
    )
    args = training_arguments(parser, argv, MODEL_NAME, "guard")
    if args is None:
        return 2
    from ...reader.train import fit

    pages = documentation_pages()
    if not pages:
        print(
            f"no documentation pages under {READER_DATA / 'docs'} (to train on and to choose the threshold):"
            " benchmarks/reader_data/collect_docs.sh recreates them",
            file=sys.stderr,
        )
        return 2
    added = [name.strip() for name in args.add_sources.split(",") if name.strip()]
    if unknown := [name for name in added if name not in data.OPTIONAL]:
        parser.error(f"--add-sources: unknown {', '.join(unknown)}; optional: {', '.join(data.OPTIONAL)}")
    sources = [s for s in data.SOURCES if s in data.DEFAULT_SOURCES or s in added]
    started = time.perf_counter()
    tally: Counter[str] = Counter()
    training = data.examples(sources, seed=args.seed, tally=tally)
    heldout = data.examples(heldout=True, seed=args.seed)
    if args.limit is not None:
        training = random.Random(args.seed).sample(training, min(args.limit, len(training)))
    by_id = {e.example_id: e.text for e in [*data.examples(sources, seed=args.seed), *heldout]}
    model_file = read_e5_file()
    tokenizer = Tokenizer(model_file.tokenizer)
    rows = guard_windows(training, tokenizer, by_id)
    labels = Counter(w.start for w in rows)
    print(
        f"{len(training)} examples, {len(rows)} windows ({labels[1]} attack, {labels[0]} benign), "
        f"{sum(len(w.input_ids) for w in rows)} tokens",
        file=sys.stderr,
    )
    settings = train_settings(args)
    tuned, log = fit(load_state_dict(model_file), rows, settings, outputs=1, pad=tokenizer.pad)
    folder = SHIPPED if args.ship else args.out
    # written before the threshold is chosen: minutes of fitting are not lost to a later error
    weights_path, weights = save_tuned(tuned, model_file, folder, args.name)
    guard = Guard(weights, tokenizer, meta={"eps": model_file.header.eps})
    # the calibration halves of the pages about prompts and about LLM security: measured, and the
    # first holds a budget only when one is asked for
    prompting = "docs_prompting" in sources
    measured = calibration(
        guard.scores,
        pages,
        heldout,
        budget=args.budget,
        prompting=prompting_pages(args.seed) if prompting else None,
        prompting_budget=args.prompting_budget if prompting else None,
        security=security_pages(args.seed) if "docs_security" in sources else None,
    )
    card = {
        **card_head(
            args.name,
            weights_path,
            "does a text give orders to the model reading it (prompt injection)? a probability",
            args.layers,
            MAX_LENGTH,
            STRIDE,
        ),
        **measured,
        "training": {
            "settings": asdict(settings),
            "examples": len(training),
            "windows": dict(labels),
            "counts": dict(sorted(tally.items())),
            "log": log[-5:],
            "seconds": round(time.perf_counter() - started),
        },
        "data": [
            *(r for r in data.manifest() if r["source"] not in data.OPTIONAL or r["source"] in added),
            *docs_trees_manifest(),
        ],
        **card_tail("veracity.bench.guard.train", argv, weights_path),
    }
    write_card(folder, args.name, card, {key: card[key] for key in ("threshold", "heldout", "calibration")})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
