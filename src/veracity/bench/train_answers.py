"""Train the answer decision (``pipeline/answer_model.json``) on tuning splits only.

    python -m veracity.bench.train_answers --datasets DIR [--out FILE] [--rows FILE]

Tuning data (never a reporting split): SQuAD 2.0 half-dev, part ``tune`` (its
first 8 articles), and CMRC 2018 ``trial``. Each question is asked as in the
answer benchmark; besides, a share of the answerable questions is asked again
with their own paragraph removed from the evidence, so the model also sees
evidence that is on topic but does not hold the answer (the common case on a
real knowledge base). Two stages:

1. *collect* (slow: retrieval): for every question, every candidate sentence's
   features (:mod:`veracity.pipeline.candidates`) and whether its claim contains
   a gold answer; written to ``--rows`` (JSON lines), whose sha256 is the
   training data digest recorded in the model;
2. *fit* (fast): a listwise sentence model on all candidates, and one per
   language with at least :data:`MIN_LANGUAGE_QUESTIONS` tuning questions;
   then, with them, the answerability features of each question
   (:func:`decision_features`) labelled "the best claim contains a gold
   answer", and a logistic answerability model; the threshold is the lowest
   one whose false-answer rate on the tuning questions asked without their
   own paragraph (the knowledge base lacks the answer) stays within
   ``--budget``: over all of them, and per language as above.

Docs tuning sets (``--docs-questions benchmarks/docs_questions/tune --docs-root
DIR``: questions a new user types, on documentation folders) may join both
stages (:mod:`veracity.bench.answer_rows` collects them; :func:`fit` says how
they weigh). The shipped model is fitted without them (see :data:`DOCS_WEIGHT`).

The features hold the embedder's cosines, whose scale differs from model to model,
so each embedder has its own model: ``--embedder e5`` collects with e5 (its
knowledge bases are kept apart in the workdir) and writes
``pipeline/answer_model.e5.json`` (:data:`veracity.pipeline.decision.MODEL_FILES`);
a knowledge base answers with the model of the embedder that built it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..index.embedders import DEFAULT_EMBEDDER, EMBEDDERS, make_embedder
from ..pipeline.candidates import (
    FEATURES,
    SentenceContext,
    TermWeights,
    local_weights,
    sentence_features,
)
from ..pipeline.choice import second_stage
from ..pipeline.decision import (
    DECISION_FEATURES,
    DECISION_FEATURES_WITH_READER,
    MODEL_FILES,
    AnswerModel,
    LogisticModel,
    Ranked,
    decision_features,
)
from ..reader.choice import ChoiceModel, named_chooser
from ..reader.runtimes import MOVED_LOGITS, RUNTIMES
from ..text.questions import SubQuestion, split_subquestions
from ..text.tokens import coverage_tokens
from .answer_rows import DOCS_SOURCE, TUNING_SETS, collect
from .choice_fit import (
    cache_path,
    choice_gain,
    cross_fitted_heads,
    fit_choice,
    paragraph_folds,
    reader_heads,
)
from .fitting import Group, fit_listwise, fit_logistic, fold_of, own_model_gain, threshold_for_budget
from .reading.train import pairwise_auc

MIN_LANGUAGE_QUESTIONS = 500
"""Tuning questions a language needs for its own sentence model and threshold."""

DOCS_WEIGHT = 30.0
"""How much a docs tuning question weighs against a reading-comprehension one in the
answerability fit. Chosen by two-fold cross-validation over the docs tuning questions (folds by
question id), held-out fold, right answers / false answers where the answer is lacking:
weight 1: en 8 of 75 / 7 of 94, zh 19 of 80 / 11 of 100; 10: en 8 / 7, zh 21 / 10;
30: en 10 / 6, zh 21 / 6 (budget kept per kind, see :func:`fit`). The shipped model is not
fitted with the docs sets: fitted with them at 30, it lost more on the reading-comprehension
reporting splits (CMRC dev 0.810 → 0.786, DRCD dev 0.822 → 0.782) than it gained on the docs
reporting sets (HTTPX 12 → 13 of 32 right with 0 → 2 false answers of 8; Vite 8 → 9 of 32)."""


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)


def _question_rows(
    rows: Sequence[dict[str, Any]],
) -> Iterator[tuple[dict[str, Any], SubQuestion, TermWeights]]:
    for row in rows:
        sub = split_subquestions(row["question"])[0]
        weights = TermWeights(chunks=row["weights"]["chunks"], frequencies=row["weights"]["frequencies"])
        yield row, sub, weights


def candidate_features(rows: Sequence[dict[str, Any]]) -> list[list[dict[str, float]]]:
    """Per question, each candidate's sentence features, recomputed from the stored contexts."""
    found = []
    for row, sub, weights in _question_rows(rows):
        contexts = [SentenceContext(**c["context"]) for c in row["candidates"]]
        local = local_weights(sub, [context.sentence for context in contexts])
        found.append([sentence_features(sub, context, weights, local) for context in contexts])
    return found


def fit(
    rows_path: Path,
    *,
    budget: float,
    docs_weight: float = DOCS_WEIGHT,
    embedder: str = DEFAULT_EMBEDDER,
    chooser: ChoiceModel | None = None,
    fold_readers: tuple[Path, Sequence[ChoiceModel]] | None = None,
    without: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset()),
) -> AnswerModel:
    """Stage 2: fit the sentence model, then the answerability model and its threshold.

    A ``chooser`` read in a runtime whose logits are not numpy's (``onnx-int8``) is recorded with
    it: an ask then reads in it (:func:`~veracity.pipeline.decision.chooser_of`).

    ``without`` (sentence features, decision features) leaves features out of the fit: what a
    feature adds is measured by fitting without it (``benchmarks/answer_feature_ablation.py``).

    A docs tuning question weighs ``docs_weight`` times a reading-comprehension one in the
    answerability fit: they are few, and they are the questions the model is for. The
    threshold keeps the false-answer budget on each kind apart: on the reading-set questions
    asked without their own paragraph, and on the docs questions whose answer the knowledge
    base lacks (the unanswerable ones, and the answerable ones asked without their files).
    The sentence models take docs questions at weight 1: ten times cost two-fold sentence
    choice on the reading sets (en 0.834 → 0.819) and gained none on the docs (right best
    sentence en 30 → 28 of 62, zh 34 → 36 of 72).

    ``fold_readers`` (the data-set folder, and one reader per fold trained without it): the
    reader's logit of a tuning question comes from the reader that never saw its paragraph
    (:func:`~veracity.bench.choice_fit.paragraph_folds`), while ``chooser`` (trained on every
    fold) is the one the model is shipped with.
    """
    rows = list(_rows(rows_path))
    per_question = candidate_features(rows)
    languages = [sub.language for _, sub, _ in _question_rows(rows)]
    from_docs = np.array([row["source"].startswith(DOCS_SOURCE) for row in rows], dtype=bool)
    row_weights = np.where(from_docs, docs_weight, 1.0)
    # at weight 0 the docs questions only calibrate: the thresholds keep the budget on them too,
    # and the models are the reading-set fit, exactly (not merely down-weighted)
    in_fit = row_weights > 0
    sentence_names = tuple(n for n in FEATURES if n not in without[0])
    x = np.array([[f[n] for n in sentence_names] for fs in per_question for f in fs], dtype=np.float64)
    groups = [
        Group(
            language,
            fold_of(row["question_id"]),
            np.array([[f[n] for n in sentence_names] for f in fs], dtype=np.float64),
            np.array([c["label"] for c in row["candidates"]], dtype=bool),
        )
        for fs, row, language, fitted in zip(per_question, rows, languages, in_fit, strict=True)
        if fs and fitted
    ]
    sentence = fit_listwise([(g.x, g.y) for g in groups], sentence_names)
    own = sorted(lang for lang in set(languages) if languages.count(lang) >= MIN_LANGUAGE_QUESTIONS)
    selection = {lang: own_model_gain(groups, lang, sentence_names) for lang in own}
    by_language = {
        lang: fit_listwise([(g.x, g.y) for g in groups if g.language == lang], sentence_names)
        for lang in own
        if selection[lang]["own"] > selection[lang]["pooled"]
    }
    first_scores, orders = [], []
    for (_row, sub, _), found in zip(_question_rows(rows), per_question, strict=True):
        model = by_language.get(sub.language, sentence)
        scores = [model.logit(f) for f in found]
        first_scores.append(scores)
        orders.append(sorted(range(len(scores)), key=lambda i: (-scores[i], i)))
    choice: LogisticModel | None = None
    choice_selection: dict[str, Any] = {}
    heads: list[list[float]] = [[] for _ in rows]
    if chooser is not None:
        questions = [sub.text for _, sub, _ in _question_rows(rows)]
        if fold_readers is None:
            heads = reader_heads(rows, questions, orders, chooser, cache_path(rows_path, chooser))
        else:
            datasets, readers = fold_readers
            row_folds = paragraph_folds(datasets, rows)
            heads = cross_fitted_heads(rows, questions, orders, row_folds, [*readers, chooser], rows_path)
        labels_first = [
            [row["candidates"][i]["label"] for i in order] for row, order in zip(rows, orders, strict=True)
        ]
        firsts = [[s[i] for i in order] for s, order in zip(first_scores, orders, strict=True)]
        folds = [fold_of(row["question_id"]) for row in rows]
        keep = [i for i, fitted in enumerate(in_fit) if fitted]
        choice_selection = choice_gain(
            [firsts[i] for i in keep],
            [heads[i] for i in keep],
            [labels_first[i] for i in keep],
            [folds[i] for i in keep],
        )
        print(f"choice stage, two-fold: {choice_selection}", file=sys.stderr)
        choice = fit_choice(
            [f for f, keep in zip(firsts, in_fit, strict=True) if keep],
            [h for h, keep in zip(heads, in_fit, strict=True) if keep],
            [y for y, keep in zip(labels_first, in_fit, strict=True) if keep],
        )
    features, labels, answerable = [], [], []
    offered = DECISION_FEATURES_WITH_READER if chooser is not None else DECISION_FEATURES
    names = tuple(n for n in offered if n not in without[1])
    for (row, sub, weights), found, scores, order, head in zip(
        _question_rows(rows), per_question, first_scores, orders, heads, strict=True
    ):
        stored = row["candidates"]
        if choice is not None:
            second = second_stage(choice, [scores[i] for i in order], head)
            found = [dict(f) for f in found]
            for position, logit in enumerate(head):
                found[order[position]]["reader"] = logit
            scores = [0.0] * len(order)
            for position, index in enumerate(order):
                scores[index] = second[position]
            order = sorted(range(len(stored)), key=lambda i: (-scores[i], i))
        ranked = [
            Ranked(
                score=scores[i],
                claim=stored[i]["claim"],
                features=found[i],
                semantic=max(0.0, stored[i]["semantic"]),
                context=SentenceContext(**stored[i]["context"]).around,
            )
            for i in order
        ]
        evidence_text = row["evidence_text"]
        evidence_tokens = coverage_tokens(evidence_text)
        values = decision_features(sub, ranked, evidence_tokens, evidence_text, weights)
        # a question without candidates has no dense cosine: it trains as 0 (nothing similar)
        features.append([values.get(name, 0.0) for name in names])
        labels.append(1.0 if order and stored[order[0]]["label"] else 0.0)
        answerable.append(row["answerable"])
    fx = np.array(features, dtype=np.float64)
    fy = np.array(labels, dtype=np.float64)
    decision = fit_logistic(fx[in_fit], fy[in_fit], names, weights=row_weights[in_fit])
    probabilities = np.array([decision.probability(dict(zip(names, f, strict=True))) for f in features])
    removed = np.array([row["removed"] for row in rows])
    lacking = removed | (from_docs & ~np.array(answerable))
    impossible = ~np.array(answerable) & ~removed & ~from_docs
    # the budget holds on each kind of tuning data apart (reading sets, docs sets), not on a mix
    kinds = [lacking & ~from_docs, lacking & from_docs]
    threshold = _threshold_within_budget(probabilities, kinds, budget)
    language_of = np.array(languages)
    # per language: the budget then holds for each language, not only on average over them
    thresholds = {
        lang: _threshold_within_budget(probabilities, [k & (language_of == lang) for k in kinds], budget)
        for lang in own
    }
    answered = probabilities >= np.array([thresholds.get(lang, threshold) for lang in languages])
    right_english = (fy == 1) & ~removed & ~from_docs & (language_of == "en")  # SQuAD's answerable
    digest = hashlib.sha256(rows_path.read_bytes()).hexdigest()
    docs_names = sorted({row["source"] for row in rows if row["source"].startswith(DOCS_SOURCE)})
    meta: dict[str, Any] = {
        "trained_on": [f"{n}/{s}/{p}" for n, s, p in TUNING_SETS] + docs_names,
        "training_rows_sha256": digest,
        "questions": len(rows),
        "candidates": int(x.shape[0]),
        "false_answer_budget": budget,
        "embedder": embedder,
        "false_answer_budget_applies_to": "tuning questions asked with their own paragraph removed "
        "(the knowledge base lacks the answer)",
        "tuning_false_answer_rate": _share(answered, removed),
        "tuning_false_answer_rate_unanswerable_squad": _share(answered, impossible),
        "tuning_best_sentence_correct": round(float(fy[np.array(answerable)].mean()), 4),
        "tuning_answer_rate_when_correct": _share(answered, fy == 1),
        "tuning_unanswerable_squad": _unanswerable_separation(
            fx, names, probabilities, answered, right_english, impossible
        ),
        "sentence_model_selection": selection,
        "tuning_by_language": {
            lang: _language_summary(lang, language_of, fy, answerable, removed, answered) for lang in own
        },
    }
    if chooser is not None:
        meta["chooser"] = {"name": chooser.name, "version": chooser.version}
        runtime = getattr(chooser, "runtime", "numpy")  # a fake in tests has none: numpy's logits
        if runtime in MOVED_LOGITS:  # the float runtimes give numpy's logits: nothing to record
            meta["chooser"]["runtime"] = runtime
        if fold_readers is not None:
            meta["chooser"]["cross_fitted_by"] = [reader.version for reader in fold_readers[1]]
        meta["choice_model_selection"] = choice_selection
    if docs_names:
        meta["docs_weight"] = docs_weight
        meta["false_answer_budget_applies_to"] += (
            "; and, apart, the docs tuning questions whose answer the knowledge base lacks"
            " (unanswerable, or asked without the files that state it)"
        )
        meta["tuning_docs"] = {
            name: _docs_summary(
                np.array([row["source"] == name for row in rows]), fy, answerable, lacking, answered
            )
            for name in docs_names
        }
    return AnswerModel(
        sentence=sentence,
        decision=decision,
        threshold=threshold,
        meta=meta,
        sentence_by_language=by_language,
        threshold_by_language=thresholds,
        choice=choice,
    )


def _threshold_within_budget(
    probabilities: npt.NDArray[np.float64], negatives: Sequence[npt.NDArray[np.bool_]], budget: float
) -> float:
    """The lowest threshold at which each non-empty group of ``negatives`` stays within ``budget``."""
    return max(threshold_for_budget(probabilities[mask], budget) for mask in negatives if mask.any())


def _unanswerable_separation(
    fx: npt.NDArray[np.float64],
    names: Sequence[str],
    probabilities: npt.NDArray[np.float64],
    answered: npt.NDArray[np.bool_],
    right: npt.NDArray[np.bool_],
    impossible: npt.NDArray[np.bool_],
) -> dict[str, Any]:
    """How well the decision (and the sentence reader's logit alone) tell a ``right`` best claim
    from a question written to have no answer in its own paragraph (SQuAD 2.0's ``impossible``
    ones), and the share of each answered or abstained on at the fitted thresholds."""
    separation: dict[str, Any] = {
        "right": int(right.sum()),
        "unanswerable": int(impossible.sum()),
        "auc_decision": pairwise_auc(probabilities[right].tolist(), probabilities[impossible].tolist()),
    }
    if "reader" in names:
        logits = fx[:, list(names).index("reader")]
        separation["auc_reader_alone"] = pairwise_auc(logits[right].tolist(), logits[impossible].tolist())
    separation["right_answered"] = _share(answered, right)
    separation["unanswerable_abstained"] = _share(~answered, impossible)
    return separation


def _share(values: npt.NDArray[Any], chosen: npt.NDArray[np.bool_]) -> float | None:
    """Mean of ``values`` over the ``chosen`` rows (4 decimals); ``None`` when none is chosen."""
    return round(float(values[chosen].mean()), 4) if chosen.any() else None


def _language_summary(
    language: str,
    language_of: npt.NDArray[np.str_],
    right: npt.NDArray[np.float64],
    answerable: Sequence[bool],
    removed: npt.NDArray[np.bool_],
    answered: npt.NDArray[np.bool_],
) -> dict[str, Any]:
    """Tuning figures of one language: questions, best sentence right, answered when right,
    false answers when the knowledge base lacks the answer (all in-sample)."""
    mine = language_of == language
    asked = mine & np.array(answerable)
    return {
        "questions": int(mine.sum()),
        "best_sentence_correct": _share(right, asked),
        "answer_rate_when_correct": _share(answered, asked & (right == 1)),
        "false_answer_rate": _share(answered, mine & removed),
    }


def _docs_summary(
    mine: npt.NDArray[np.bool_],
    right: npt.NDArray[np.float64],
    answerable: Sequence[bool],
    lacking: npt.NDArray[np.bool_],
    answered: npt.NDArray[np.bool_],
) -> dict[str, Any]:
    """In-sample figures of one docs tuning set: answered with a right best claim among its
    answerable questions, answered among those whose answer the knowledge base lacks."""
    asked = mine & np.array(answerable)
    return {
        "answerable": int(asked.sum()),
        "answered_right": _share(answered & (right == 1), asked),
        "best_sentence_correct": _share(right, asked),
        "lacking_answer": int((mine & lacking).sum()),
        "false_answer_rate": _share(answered, mine & lacking),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: collect (unless ``--rows`` exists and ``--reuse-rows``), fit, write the model."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--datasets", type=Path, required=True, help="folder holding squad2_dev_half/, cmrc2018/"
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="the model file (default: the shipped one for --embedder, pipeline/answer_model.json for use)",
    )
    parser.add_argument(
        "--embedder",
        choices=sorted(name for name in EMBEDDERS if name != "fake"),
        default=DEFAULT_EMBEDDER,
        help=f"the embedder the knowledge bases are built with (default {DEFAULT_EMBEDDER})",
    )
    parser.add_argument("--rows", type=Path, default=Path("answer-training-rows.jsonl"))
    parser.add_argument("--reuse-rows", action="store_true", help="fit on an existing --rows file")
    parser.add_argument(
        "--workdir", type=Path, default=Path(".veracity-bench"), help="cached knowledge bases"
    )
    parser.add_argument(
        "--per-set",
        type=int,
        default=None,
        help="questions sampled per tuning set (default: all of them, as the shipped model was trained)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=0.1,
        help="false-answer budget when the knowledge base lacks the answer",
    )
    parser.add_argument(
        "--docs-questions",
        type=Path,
        help="folder of docs tuning question sets (YAML; benchmarks/docs_questions/tune/)",
    )
    parser.add_argument(
        "--docs-root",
        type=Path,
        help="folder holding each docs tuning set's documentation folder, named as its YAML file's stem",
    )
    parser.add_argument(
        "--docs-weight",
        type=float,
        default=DOCS_WEIGHT,
        help="weight of a docs tuning question against a reading-comprehension one in the fit; 0: they "
        f"only calibrate the thresholds (default {DOCS_WEIGHT})",
    )
    parser.add_argument(
        "--only-docs",
        action="store_true",
        help="collect the docs tuning sets alone (rows to append to a reading-comprehension rows file)",
    )
    parser.add_argument(
        "--chooser",
        default="none",
        help="sentence reader of the second choice stage: none (default), shipped, or a chooser's .npz",
    )
    parser.add_argument(
        "--chooser-folds",
        nargs=2,
        metavar=("FOLD0_NPZ", "FOLD1_NPZ"),
        help="readers trained with `chooser --tuning-fold 0` and `1`: each tuning question's reader "
        "logit comes from the one that never saw its paragraph (--chooser: the one trained on both)",
    )
    parser.add_argument(
        "--chooser-runtime",
        choices=RUNTIMES,
        default=None,
        help="what computes the reader's logits the models are fitted on (default: the float runtime, "
        "numpy's logits); onnx-int8 moves them, so the model records it and asks read in it too",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.chooser_folds and args.chooser == "none":
        parser.error("--chooser-folds needs --chooser: the reader trained on every fold, shipped with it")
    if (args.docs_questions is None) != (args.docs_root is None):
        parser.error("--docs-questions and --docs-root go together")
    docs_sets = []
    if args.docs_questions is not None:
        for path in sorted(args.docs_questions.glob("*.yaml")):
            folder = args.docs_root / path.stem
            if not folder.is_dir():
                parser.error(f"no documentation folder {folder} for {path} (see the file's source: line)")
            docs_sets.append((path, folder))
    out = args.out or Path(__file__).parents[1] / "pipeline" / MODEL_FILES[args.embedder]
    # knowledge bases built with another embedder are kept apart: a cached one is reused as is
    workdir = args.workdir if args.embedder == DEFAULT_EMBEDDER else args.workdir / args.embedder
    if not (args.reuse_rows and args.rows.is_file()):
        collect(
            args.datasets,
            args.rows,
            per_set=args.per_set,
            seed=args.seed,
            workdir=workdir,
            docs_sets=docs_sets,
            reading_sets=not args.only_docs,
            embedder=make_embedder(args.embedder),
        )
        if args.only_docs:
            return
    fold_readers = None
    if args.chooser_folds:
        readers = [named_chooser(path, args.chooser_runtime) for path in args.chooser_folds]
        if None in readers:
            parser.error("--chooser-folds names two readers (.npz files), not none")
        fold_readers = (args.datasets, [r for r in readers if r is not None])
    model = fit(
        args.rows,
        budget=args.budget,
        docs_weight=args.docs_weight,
        embedder=args.embedder,
        chooser=named_chooser(args.chooser, args.chooser_runtime),
        fold_readers=fold_readers,
    )
    out.write_text(json.dumps(model.to_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in model.to_dict().items() if not k.endswith("_model")}, indent=1))


if __name__ == "__main__":
    main()
