"""Choose the reader's answer thresholds on tuning data: ``python -m veracity.bench.reading.calibrate``.

The threshold turns the reader's answer score into answer or abstain, so it is chosen where it
acts: through the whole pipeline, on knowledge bases of the tuning splits (SQuAD 2.0 half-dev
part ``tune``, CMRC 2018 ``trial``, DRCD ``test``), asking only the questions whose paragraph the
reader was *not* trained on (its validation share, :func:`veracity.bench.reading.train.held_out`).
Each such question is asked twice: as it is, and, when answerable, with its own paragraph removed
from the knowledge base (the answer is then not there: saying anything is a false answer). The
unanswerable questions of SQuAD 2.0 count as negatives too.

Per language the threshold is the one with the most correct outcomes (an answerable question
answered with a gold answer in the claim, a negative abstained) whose false-answer rate on the
negatives is at most the budget. Thresholds, budget and counts go into the reader's model card.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...index.embedders import make_embedder
from ...model.contracts import AnswerStatus, Principal
from ...reader.model import MODEL_NAME, Reader, load_reader
from ..answers import AS_OF, ROLE, TARGET_VERSION, TENANT, build_kb, contains_answer
from ..qa import load_qa
from ..shared import MISSING, datasets_folder
from .train import SHIPPED, held_out

TUNING: tuple[tuple[str, str | None, str, str], ...] = (
    ("squad2_dev_half", None, "tune", "en"),
    ("cmrc2018", "trial", "all", "zh"),
    ("drcd", "test", "all", "zh"),
)
"""(data set, split, part, language) of every tuning split read."""
BUDGET = 0.2
"""Largest share of negatives (unanswerable, or the paragraph removed) that may be answered."""
NEVER = -1e9


@dataclass(frozen=True, slots=True)
class Row:
    """One asked question: its language, whether an answer is there, the reader's best answer
    score, and whether the claim holds a gold answer."""

    language: str
    negative: bool
    score: float
    contained: bool


def _ask(kb: Any, question: str, answers: Sequence[str], remove: Sequence[str] = ()) -> tuple[float, bool]:
    query = kb.query(question, Principal.of(TENANT, ROLE), TARGET_VERSION, AS_OF)
    answer = kb.answer(kb.retrieve(query, remove_chunk_ids=remove))
    scores = [d[1] for d in answer.trace.decisions]
    said = answer.status is not AnswerStatus.ABSTAIN
    return (min(scores) if scores else NEVER), said and contains_answer(
        [c.text for c in answer.claims], answers
    )


def collect(reader: Reader, datasets: Path, workdir: Path, share: float) -> list[Row]:
    """The calibration rows of every tuning split (see the module docstring)."""
    saved, reader.thresholds = reader.thresholds, {"all": NEVER}  # every sub-question answered
    try:
        return _collect(reader, datasets, workdir, share)
    finally:
        reader.thresholds = saved


def _collect(reader: Reader, datasets: Path, workdir: Path, share: float) -> list[Row]:
    rows: list[Row] = []
    embedder = make_embedder("use")
    for name, split, part, language in TUNING:
        qa = load_qa(datasets / name, split, part)
        kb = build_kb(qa, embedder, workdir / f"{qa.name}-{qa.split}")
        kb.reader = reader
        texts = {paragraph_id: text for paragraph_id, _, text in qa.paragraphs}
        chosen = [item for item in qa.items if held_out(texts[item.paragraph_id], share)]
        for number, item in enumerate(chosen, start=1):
            score, contained = _ask(kb, item.question, item.answers)
            rows.append(Row(language, item.impossible, score, contained))
            if not item.impossible:
                gold = [c.chunk_id for d in kb.catalog.documents() if d.source_id == item.paragraph_id
                        for c in kb.catalog.chunks(d.document_id)]  # fmt: skip
                removed, _ = _ask(kb, item.question, item.answers, gold)
                rows.append(Row(language, True, removed, False))
            print(f"\r{name}: {number}/{len(chosen)}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    return rows


def choose(rows: Sequence[Row], budget: float) -> dict[str, Any]:
    """The threshold with the most correct outcomes within the false-answer budget, and its rates."""
    negatives = [r for r in rows if r.negative]
    positives = [r for r in rows if not r.negative]
    best: dict[str, Any] | None = None
    for threshold in sorted({r.score for r in rows} | {NEVER}):
        false_answers = sum(r.score >= threshold for r in negatives)
        if negatives and false_answers / len(negatives) > budget:
            continue
        correct = (
            sum(r.score >= threshold and r.contained for r in positives) + len(negatives) - false_answers
        )
        if best is None or correct > best["correct"]:
            best = {
                "threshold": round(threshold, 4),
                "correct": correct,
                "correct_outcome": round(correct / len(rows), 4),
                "false_answer": round(false_answers / len(negatives), 4) if negatives else None,
                "false_abstain": round(sum(r.score < threshold for r in positives) / len(positives), 4)
                if positives
                else None,
                "answerable": len(positives),
                "negatives": len(negatives),
            }
    assert best is not None
    return best


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m veracity.bench.reading.calibrate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument(
        "--reader", type=Path, default=SHIPPED / f"{MODEL_NAME}.npz", help="the reader's .npz"
    )
    parser.add_argument("--budget", type=float, default=BUDGET)
    parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "veracity" / "bench-answers")
    args = parser.parse_args(argv)
    datasets = datasets_folder()
    if datasets is None:
        print(MISSING, file=sys.stderr)
        return 2
    reader = load_reader(args.reader.stem, args.reader.parent)
    card_path = args.reader.with_suffix(".json")
    card = json.loads(card_path.read_text(encoding="utf-8"))
    rows = collect(reader, datasets, args.workdir, float(card["training"]["validation_share"]))
    chosen = {lang: choose([r for r in rows if r.language == lang], args.budget) for lang in ("en", "zh")}
    card["thresholds"] = {lang: value["threshold"] for lang, value in chosen.items()}
    card["calibration"] = {"budget": args.budget, "splits": [list(t) for t in TUNING], "per_language": chosen}
    card_path.write_text(json.dumps(card, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(chosen, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
