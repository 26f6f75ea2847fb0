"""A guard's threshold and its measurements on the tuning side, for one runtime:
``python -m veracity.bench.guard.calibrate --runtime onnx-int8``.

The rule is the one training applies (:mod:`veracity.bench.guard.train` calls :func:`calibration`):
the threshold is the lowest score (at least 0.5) at which the calibration half of the docs tuning
sets' pages, which no guard trains on, is quarantined at most ``--budget`` of the time; the card's
held-out attack sets (BIPIA and deepset test, attacks put into held-out pages) are scored at it,
and so is the calibration half of the pages about prompts. Training calibrates the weights in the
``numpy`` runtime; a runtime whose scores differ (``onnx-int8``) is calibrated here, and its entry
goes into the card's ``runtimes`` (``--ship``: the shipped card; else ``--card``), which
:meth:`veracity.guard.model.Guard.using` reads. The entry says whether the runtime is ``adopted``:
it keeps the held-out recall floor and benign ceiling (``--recall-floor``, ``--benign-ceiling``);
:func:`veracity.guard.model.default_runtime` picks only an adopted one. Needs no PyTorch.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...guard.model import MODEL_NAME, guard_files, load_guard
from ...reader.runtimes import RUNTIMES
from ..tuned import write_card
from . import data

BUDGET = 0.01
PROMPTING_BUDGET = 0.03
RECALL_FLOOR = 0.867
"""Held-out attack recall a runtime must keep to be adopted (``default_runtime`` picks it): the rule
written for int8 before its first calibration (the first guard's 0.897 less 0.03)."""
BENIGN_CEILING = 0.018
"""Held-out benign texts a runtime may quarantine and still be adopted (the same rule)."""
PROMPTING_CALIBRATION = 800
"""Sections of the calibration half of the pages about prompts scored for the card."""


def documentation_pages() -> list[str]:
    """Sections of the documentation the guard is not trained on (the calibration half of the docs
    tuning sets' pages, :func:`veracity.bench.guard.data.docs_half`)."""
    return [section for _, _, section in data.documentation("calibrate")]


def prompting_pages(seed: int) -> list[str]:
    """The calibration half of the pages about prompts: :data:`PROMPTING_CALIBRATION` sections,
    seeded (:func:`veracity.bench.guard.data.prompting_sections`: it raises when the file is not
    collected)."""
    return _calibration_sample(data.prompting_sections("calibrate"), f"{seed}:calibrate")


def security_pages(seed: int) -> list[str]:
    """The calibration half of the pages about LLM security and one's own assistant
    (:func:`veracity.bench.guard.data.security_sections`): :data:`PROMPTING_CALIBRATION` sections,
    seeded; measured, never budgeted."""
    return _calibration_sample(data.security_sections("calibrate"), f"{seed}:calibrate-security")


def _calibration_sample(found: list[tuple[str, str, str]], seed_key: str) -> list[str]:
    """:data:`PROMPTING_CALIBRATION` sections of ``found``, sampled with ``seed_key``, in id order."""
    kept = random.Random(seed_key).sample(found, min(PROMPTING_CALIBRATION, len(found)))
    return [data.clip(section) for _, _, section in sorted(kept)]


def lowest_within(benign_scores: Sequence[float], budget: float) -> float:
    """The lowest threshold (at least 0.5, at most 0.99) at which at most ``budget`` of
    ``benign_scores`` are quarantined."""
    ordered = sorted(benign_scores, reverse=True)
    allowed = int(len(ordered) * budget)
    return min(0.99, max(0.5, ordered[allowed] + 1e-6 if allowed < len(ordered) else 0.5))


def rates(scores: Sequence[float], labels: Sequence[int], threshold: float) -> dict[str, Any]:
    """Recall on attacks and false-quarantine rate on benign texts at ``threshold``."""
    attacks = [s for s, y in zip(scores, labels, strict=True) if y]
    benign = [s for s, y in zip(scores, labels, strict=True) if not y]
    return {
        "attacks": len(attacks),
        "benign": len(benign),
        "recall": round(sum(s >= threshold for s in attacks) / len(attacks), 4) if attacks else None,
        "false_quarantine": round(sum(s >= threshold for s in benign) / len(benign), 4) if benign else None,
    }


def calibration(
    scores: Callable[[list[str]], list[float]],
    pages: list[str],
    heldout: Sequence[data.GuardExample],
    *,
    budget: float,
    prompting: list[str] | None = None,
    prompting_budget: float | None = None,
    security: list[str] | None = None,
) -> dict[str, Any]:
    """The threshold chosen by the rule (see the module docstring; with ``prompting`` pages and a
    ``prompting_budget``, they hold that budget too; without one they are only measured; the
    ``security`` pages are only measured) and the card's fields measured at it."""
    page_scores = scores(pages)
    threshold = lowest_within(page_scores, budget)
    hard_scores = scores(prompting) if prompting else []
    if prompting_budget is not None and hard_scores:
        threshold = max(threshold, lowest_within(hard_scores, prompting_budget))
    held_scores = scores([e.text for e in heldout])
    held_labels = [int(e.label == "attack") for e in heldout]
    measured: dict[str, Any] = {"budget": budget, "documentation_sections": len(pages)}
    measured["documentation"] = rates(page_scores, [0] * len(pages), threshold)
    if prompting_budget is not None:
        measured["prompting_budget"] = prompting_budget
    if prompting is not None:
        measured["prompting_pages"] = rates(hard_scores, [0] * len(hard_scores), threshold)
    if security:
        security_scores = scores(security)
        measured["security_pages"] = rates(security_scores, [0] * len(security_scores), threshold)
    return {
        "threshold": round(threshold, 6),
        "calibration": measured,
        "heldout": rates(held_scores, held_labels, threshold),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m veracity.bench.guard.calibrate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--runtime", choices=[r for r in RUNTIMES if r != "numpy"], default="onnx-int8")
    parser.add_argument("--budget", type=float, default=BUDGET, help="false quarantine on documentation")
    parser.add_argument("--seed", type=int, default=0, help="the seed the guard was trained with")
    parser.add_argument(
        "--recall-floor",
        type=float,
        default=RECALL_FLOOR,
        help="held-out attack recall the runtime must keep to be the default one",
    )
    parser.add_argument(
        "--benign-ceiling",
        type=float,
        default=BENIGN_CEILING,
        help="held-out benign texts it may quarantine to be the default one",
    )
    parser.add_argument("--name", default=MODEL_NAME)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--ship", action="store_true", help="write into the shipped guard's card")
    where.add_argument("--card", type=Path, help="the card (.json) of a guard whose .npz lies beside it")
    args = parser.parse_args(argv)
    weights, card_path = guard_files(args.name) if args.ship else (args.card.with_suffix(".npz"), args.card)
    pages = documentation_pages()
    if not pages:
        print(
            "no documentation pages: benchmarks/reader_data/collect_docs.sh recreates them", file=sys.stderr
        )
        return 2
    started = time.perf_counter()
    guard = load_guard(weights.stem, weights.parent, runtime="numpy").using(args.runtime, uncalibrated=True)
    # the rule the weights were calibrated by: the pages about prompts hold a budget when they did
    prompting_budget = guard.meta["calibration"].get("prompting_budget")
    heldout = data.examples(heldout=True, seed=args.seed)
    measured = calibration(
        guard.scores, pages, heldout, budget=args.budget, prompting=prompting_pages(args.seed),
        prompting_budget=prompting_budget, security=security_pages(args.seed) if "security_pages"
        in guard.meta["calibration"] else None,
    )  # fmt: skip
    held = measured["heldout"]
    adopted = held["recall"] >= args.recall_floor and held["false_quarantine"] <= args.benign_ceiling
    entry = {
        **measured,
        "adopted": adopted,
        "why": f"held-out attacks caught {held['recall']} (floor {args.recall_floor}), benign quarantined "
        f"{held['false_quarantine']} (ceiling {args.benign_ceiling}): "
        + (
            "the default runtime where onnxruntime is installed"
            if adopted
            else "not the default runtime; asked for by name it runs at this threshold"
        ),
        "command": "python -m veracity.bench.guard.calibrate "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "seconds": round(time.perf_counter() - started),
        "reporting": {},
    }
    card = json.loads(card_path.read_text(encoding="utf-8"))
    card["runtimes"] = {**card.get("runtimes", {}), args.runtime: entry}
    shown = {key: entry[key] for key in ("threshold", "calibration", "heldout")}
    write_card(card_path.parent, card_path.stem, card, shown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
