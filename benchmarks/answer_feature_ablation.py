"""What each hand-built feature of the answer step adds: the answer models fitted without it.

    python benchmarks/answer_feature_ablation.py --rows ROWS.jsonl [--chooser shipped]
        [--only sentence:coverage,decision:margin] [--jobs 2] [--out FILE.json]
    python benchmarks/answer_feature_ablation.py --rows ROWS.jsonl --backward
        --only sentence:rank,sentence:slot_gap,... [--tolerance 0.004] [--chooser none]

``ROWS.jsonl`` is the tuning rows file of ``python -m veracity.bench.train_answers`` (its
``--rows``; tuning splits only: SQuAD 2.0 half-dev articles 1-8, CMRC 2018 trial, and the docs
tuning sets when they were collected). The models are fitted once with every feature (the
reference, in the same run) and once without each feature of the sentence model and of the
answerability model. Per fit it prints:

- sentence choice, two-fold by question: the share of questions whose best candidate is right
  (English and Chinese, the pooled model), and with the sentence reader's second stage;
- in-sample, at the false-answer budget: the share of right best claims answered per language,
  and how the decision tells right claims from SQuAD's unanswerable questions (AUC);
- the change of each figure against the reference.

A feature whose removal changes nothing adds nothing on these data; one that costs a figure
earns its place by that much. Measured numbers only; nothing is written to the package.

``--backward`` deletes by backward elimination instead: the ``--only`` features, in the order
given (least harmful first, from a one-at-a-time run), are left out one after another, a fit
after each, and a removal is kept when none of :data:`BACKWARD_FIGURES` falls by more than
``--tolerance`` against the reference; it prints each step and the features removable together.
One at a time is not enough: features that measure as nothing alone can stand in for one another.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from veracity.bench.train_answers import fit
from veracity.pipeline.candidates import FEATURES
from veracity.pipeline.decision import DECISION_FEATURES, DECISION_FEATURES_WITH_READER
from veracity.reader.choice import named_chooser

BUDGET = 0.1
"""The false-answer budget of the shipped answer model (``train_answers --budget``)."""
BACKWARD_FIGURES = ("choice_en", "choice_zh", "answered_right_en", "answered_right_zh")
"""The figures a backward-elimination step may not lower by more than the tolerance."""
Step = tuple[str, str]
"""A feature of the answer step: (stage, name), the stage ``sentence`` or ``decision``."""
Figures = Callable[[Sequence[Step]], dict[str, Any]]
"""What the fit without the given features measures (:func:`_figures`)."""


def _figures(model: Any) -> dict[str, float | None]:
    meta = model.meta
    selection = meta.get("sentence_model_selection", {})
    by_language = meta.get("tuning_by_language", {})
    squad = meta.get("tuning_unanswerable_squad", {})
    choice = meta.get("choice_model_selection", {})
    return {
        "choice_en": selection.get("en", {}).get("pooled"),
        "choice_zh": selection.get("zh", {}).get("pooled"),
        "with_reader": choice.get("with_reader"),
        "answered_right_en": by_language.get("en", {}).get("answer_rate_when_correct"),
        "answered_right_zh": by_language.get("zh", {}).get("answer_rate_when_correct"),
        "auc_unanswerable_squad": squad.get("auc_decision"),
    }


def _fit_without(rows: Path, chooser_name: str, left_out: Sequence[Step]) -> dict[str, Any]:
    without = (
        frozenset(f for s, f in left_out if s == "sentence"),
        frozenset(f for s, f in left_out if s == "decision"),
    )
    return _figures(fit(rows, budget=BUDGET, chooser=named_chooser(chooser_name), without=without))


def _fit_one(rows: Path, chooser_name: str, stage: str, feature: str) -> dict[str, Any]:
    left_out = [(stage, feature)] if stage != "reference" else []
    return {"stage": stage, "feature": feature, **_fit_without(rows, chooser_name, left_out)}


def eliminate(
    order: Sequence[Step], figures_of: Figures, tolerance: float
) -> tuple[list[Step], list[tuple[Step, bool, dict[str, float]]]]:
    """Backward elimination (see the module docstring): the removable features, and per step the
    feature, whether it went, and the change of each figure against the reference. A step no
    figure measures is kept: nothing shows that the feature is not needed."""
    reference = figures_of([])
    measured = [k for k in BACKWARD_FIGURES if reference.get(k) is not None]
    removed: list[Step] = []
    steps = []
    for step in order:
        got = figures_of([*removed, step])
        changes = {k: got[k] - reference[k] for k in measured if got.get(k) is not None}
        goes = bool(changes) and all(change >= -tolerance for change in changes.values())
        if goes:
            removed.append(step)
        steps.append((step, goes, changes))
    return removed, steps


def _backward(rows: Path, chooser_name: str, order: Sequence[Step], tolerance: float) -> int:
    removed, steps = eliminate(order, lambda left_out: _fit_without(rows, chooser_name, left_out), tolerance)
    for (stage, feature), goes, changes in steps:
        verdict = "removed" if goes else "kept"
        print(f"{stage}:{feature} {verdict} " + ", ".join(f"{k} {v:+.4f}" for k, v in changes.items()))
    print("removable together: " + (",".join(f"{s}:{f}" for s, f in removed) or "none"))
    return 0


def _plan(only: str | None, with_reader: bool) -> list[Step]:
    decision = DECISION_FEATURES_WITH_READER if with_reader else DECISION_FEATURES
    every = [("sentence", f) for f in FEATURES] + [("decision", f) for f in decision]
    if only is None:
        return every
    asked = [tuple(item.split(":", 1)) for item in only.split(",") if item]
    unknown = [f"{s}:{f}" for s, f in asked if (s, f) not in every]
    if unknown:
        raise SystemExit(f"error: not a feature of the answer step: {', '.join(unknown)}")
    return [(s, f) for s, f in asked]


def _delta(value: float | None, reference: float | None) -> str:
    if value is None or reference is None:
        return "n/a"
    return f"{value:.4f} ({value - reference:+.4f})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=Path, required=True, help="train_answers' tuning rows (JSON lines)")
    parser.add_argument(
        "--chooser", default="shipped", help="sentence reader: shipped (default), none, or a .npz"
    )
    parser.add_argument("--only", help="stage:feature,... (default: every feature of both models)")
    parser.add_argument("--jobs", type=int, default=1, help="fits at once (each loads the rows)")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON")
    parser.add_argument(
        "--backward",
        action="store_true",
        help="backward elimination over the --only features, in their order (least harmful first)",
    )
    parser.add_argument(
        "--tolerance", type=float, default=0.004, help="--backward: largest fall a removal may cost"
    )
    args = parser.parse_args(argv)
    if not args.rows.is_file():
        print(f"error: no rows file {args.rows}: make it with train_answers --rows", file=sys.stderr)
        return 2
    if args.backward:
        if args.only is None:
            parser.error("--backward needs --only: the features to try, least harmful first")
        return _backward(args.rows, args.chooser, _plan(args.only, args.chooser != "none"), args.tolerance)
    plan = [("reference", ""), *_plan(args.only, args.chooser != "none")]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(_fit_one, args.rows, args.chooser, stage, feature) for stage, feature in plan]
        results = []
        for done, future in enumerate(futures, start=1):
            results.append(future.result())
            print(f"fitted {done}/{len(plan)}", file=sys.stderr, flush=True)
    reference = results[0]
    keys = [k for k in reference if k not in ("stage", "feature")]
    print("| without | " + " | ".join(keys) + " |")
    print("|---|" + "---|" * len(keys))
    for row in results:
        reference_row = row["stage"] == "reference"
        label = "(reference: every feature)" if reference_row else f"{row['stage']}:{row['feature']}"
        cells = [_delta(row[k], reference[k]) for k in keys]
        print(f"| {label} | " + " | ".join(cells) + " |")
    if args.out is not None:
        report = {"rows": args.rows.name, "chooser": args.chooser, "budget": BUDGET, "fits": results}
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
