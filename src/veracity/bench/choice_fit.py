"""The second stage of sentence choice, fitted on the answer models' tuning rows
(``python -m veracity.bench.train_answers --chooser NAME``, :mod:`veracity.pipeline.choice`).

The sentence reader reads the first :data:`~veracity.pipeline.choice.CHOICE_DEPTH` candidates of
each tuning question (first-stage order); its logits are kept in a file beside the rows (one per
reader version), since reading them takes minutes and the fit seconds. The choice model is then
fitted listwise over those heads on the two features (first-stage logit, reader logit).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..model.contracts import replace_file
from ..pipeline.choice import CHOICE_DEPTH, CHOICE_FEATURES, reader_input, second_stage
from ..pipeline.decision import LogisticModel
from ..reader.choice import ChoiceModel
from .fitting import fit_listwise


def cache_path(rows_path: Path, chooser: ChoiceModel) -> Path:
    """Where the reader's logits of ``rows_path``'s heads are kept for ``chooser``."""
    return rows_path.with_name(f"{rows_path.stem}.chooser-{chooser.version}.json")


def reader_heads(
    rows: Sequence[dict[str, Any]],
    questions: Sequence[str],
    orders: Sequence[Sequence[int]],
    chooser: ChoiceModel,
    cache: Path | None,
) -> list[list[float]]:
    """Per question, the reader's logits of its first :data:`CHOICE_DEPTH` candidates in
    ``orders`` (first-stage order), read from ``cache`` where it holds the same question and
    candidate texts (keyed by their digest)."""
    known: dict[str, Any] = json.loads(cache.read_text(encoding="utf-8")) if cache and cache.is_file() else {}
    out: list[list[float]] = []
    read = 0
    for number, (row, question, order) in enumerate(zip(rows, questions, orders, strict=True), start=1):
        contexts = [row["candidates"][i]["context"] for i in order[:CHOICE_DEPTH]]
        inputs: list[tuple[str, ...]] = [
            reader_input(c["subject"], c["sentence"], c.get("table_header", ""), c["previous"])
            for c in contexts
        ]
        if not getattr(chooser, "context_tokens", 0):  # the candidate alone: the keys it was cached under
            inputs = [i[:2] for i in inputs]
        key = hashlib.sha256(json.dumps([question, inputs], ensure_ascii=False).encode("utf-8")).hexdigest()
        stored = known.get(key)
        if stored is None:
            stored = known[key] = {"logits": chooser.scores(question, inputs) if inputs else []}
            read += 1
        out.append([float(v) for v in stored["logits"]])
        if number % 250 == 0:
            done = f"{number}/{len(rows)} questions ({read} read, the rest from the cache)"
            print(f"sentence reader: {done}", file=sys.stderr, flush=True)
    if cache is not None and read:  # whole: fits running at once read either file, never half of one
        replace_file(cache, json.dumps(known, sort_keys=True).encode("utf-8"))
    return out


def paragraph_folds(datasets: Path, rows: Sequence[dict[str, Any]]) -> list[int | None]:
    """Per row, the cross-fitting fold of its question's paragraph (``chooser --tuning-fold``), or
    ``None`` for a row outside the reading tuning sets (a docs question)."""
    from .answer_rows import TUNING_SETS
    from .qa import load_qa
    from .reading.chooser import tuning_fold

    fold_of_question: dict[tuple[str, str], int] = {}
    for name, split, part in TUNING_SETS:
        qa = load_qa(datasets / name, split=split, part=part)
        texts = {pid: text for pid, _, text in qa.paragraphs}
        source = f"{name}/{qa.split}/{part}"
        for item in qa.items:
            fold_of_question[(source, item.question_id)] = tuning_fold(texts[item.paragraph_id])
    return [fold_of_question.get((row["source"], row["question_id"])) for row in rows]


def cross_fitted_heads(
    rows: Sequence[dict[str, Any]],
    questions: Sequence[str],
    orders: Sequence[Sequence[int]],
    folds: Sequence[int | None],
    readers: Sequence[ChoiceModel],
    rows_path: Path,
) -> list[list[float]]:
    """:func:`reader_heads` with each row read by ``readers[fold]``, the reader trained without its
    paragraph's fold; a row without a fold is read by ``readers[-1]`` (trained on every fold)."""
    heads: list[list[float]] = [[] for _ in rows]
    for index, reader in enumerate(readers):
        chosen = [
            i for i, fold in enumerate(folds) if fold == index or (fold is None and index == len(readers) - 1)
        ]
        read = reader_heads(
            [rows[i] for i in chosen],
            [questions[i] for i in chosen],
            [orders[i] for i in chosen],
            reader,
            cache_path(rows_path, reader),
        )
        for i, logits in zip(chosen, read, strict=True):
            heads[i] = logits
    return heads


def fit_choice(
    first: Sequence[Sequence[float]],
    heads: Sequence[Sequence[float]],
    labels: Sequence[Sequence[bool]],
) -> LogisticModel:
    """The choice model: listwise over each question's head (first-stage logits best first, the
    reader's logits, and whether each candidate's claim is right)."""
    groups = [
        (
            np.array([[f, r] for f, r in zip(scores, logits, strict=False)], dtype=np.float64),
            np.array(list(right[: len(logits)]), dtype=bool),
        )
        for scores, logits, right in zip(first, heads, labels, strict=True)
        if logits
    ]
    return fit_listwise(groups, CHOICE_FEATURES)


def choice_gain(
    first: Sequence[Sequence[float]],
    heads: Sequence[Sequence[float]],
    labels: Sequence[Sequence[bool]],
    folds: Sequence[int],
) -> dict[str, Any]:
    """Two-fold (by question id) share of the questions with a right candidate whose best candidate
    is right: by the first stage alone, and with the choice model fitted on the other fold."""
    right = {"first_stage": 0, "with_reader": 0}
    asked = 0
    for fold in (0, 1):
        train = [i for i, f in enumerate(folds) if f != fold]
        model = fit_choice([first[i] for i in train], [heads[i] for i in train], [labels[i] for i in train])
        for i in (i for i, f in enumerate(folds) if f == fold and any(labels[i])):
            asked += 1
            right["first_stage"] += int(labels[i][0])
            scores = second_stage(model, first[i], heads[i])
            right["with_reader"] += int(labels[i][max(range(len(scores)), key=lambda k: (scores[k], -k))])
    return {"questions": asked, **{k: round(v / asked, 4) if asked else None for k, v in right.items()}}
