"""Train the answer decision (``pipeline/answer_model.json``) on tuning splits only.

    python -m veracity.bench.train_answers --datasets DIR [--out FILE] [--rows FILE]

Tuning data (never a reporting split): SQuAD 2.0 half-dev, part ``tune`` (its
first 8 articles), and CMRC 2018 ``trial``. Each question is asked as in the
answer benchmark; besides, a share of the answerable questions is asked again
with their own paragraph removed from the evidence, so the model also sees
evidence that is on topic but does not hold the answer (the common case on a
real knowledge base). Two stages:

1. *collect* (slow: retrieval): for every question, every candidate sentence's
   features (:mod:`veracity.pipeline.sentences`) and whether its claim contains
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
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..index.embedders import DEFAULT_EMBEDDER, make_embedder
from ..index.snapshot import index_text
from ..model.contracts import Hit, Principal
from ..pipeline.decision import DECISION_FEATURES, AnswerModel, Ranked, decision_features
from ..pipeline.engine import KnowledgeBase, sentence_embedding
from ..pipeline.sentences import (
    FEATURES,
    SentenceContext,
    TermWeights,
    local_weights,
    sentence_contexts,
    sentence_features,
    takes_next_sentence,
)
from ..text.questions import SubQuestion, split_subquestions
from ..text.tokens import coverage_tokens, tokenize
from .answers import AS_OF, ROLE, TARGET_VERSION, TENANT, build_kb, contains_answer
from .fitting import Group, fit_listwise, fit_logistic, fold_of, own_model_gain, threshold_for_budget
from .qa import QAItem, load_qa

MIN_LANGUAGE_QUESTIONS = 500
"""Tuning questions a language needs for its own sentence model and threshold."""

TUNING_SETS = (("squad2_dev_half", "dev", "tune"), ("cmrc2018", "trial", "all"))
"""(data-set folder, split, part) of every tuning source."""


def _candidate_rows(kb: KnowledgeBase, item: QAItem, *, remove_paragraph: bool) -> dict[str, Any] | None:
    """One question's candidates (features, label) and what the decision needs, or ``None``."""
    subs = split_subquestions(item.question)
    if len(subs) != 1:
        return None
    query = kb.query(item.question, Principal.of(TENANT, ROLE), TARGET_VERSION, AS_OF)
    removed: set[str] = set()
    if remove_paragraph:
        assert kb.snapshot is not None
        removed = {
            chunk_id
            for document_id, document in kb.snapshot.documents.items()
            if document.source_id == item.paragraph_id
            for chunk_id in kb.snapshot.chunks_by_document[document_id]
        }
    retrieval = kb.retrieve(query, remove_chunk_ids=removed)
    contexts = sentence_contexts(
        retrieval.packet.hits,
        retrieval.documents,
        question_vector=retrieval.query_vector,
        embed=sentence_embedding(kb.embedder),
    )
    evidence_text = "\n".join(
        " ".join((retrieval.documents[h.chunk.document_id].title, *h.chunk.heading_path, h.chunk.text))
        for h in retrieval.packet.hits
    )
    answerable = not item.impossible and not remove_paragraph
    chunks, frequencies = _without(kb, removed, retrieval.term_weights)
    return {
        "question_id": item.question_id,
        "question": item.question,
        "answerable": answerable,
        "removed": remove_paragraph,
        "weights": {"chunks": chunks, "frequencies": frequencies},
        "evidence_text": evidence_text,
        "candidates": [
            _stored_candidate(subs[0], item, answerable, hit, claim_start, end, next_end, context)
            for hit, _, end, claim_start, next_end, context in contexts
        ],
    }


def _stored_candidate(
    sub: SubQuestion,
    item: QAItem,
    answerable: bool,
    hit: Hit,
    claim_start: int,
    end: int,
    next_end: int | None,
    context: SentenceContext,
) -> dict[str, Any]:
    """A candidate as a training row: its context, chunk cosine, claim and label."""
    claim_end = next_end if next_end is not None and takes_next_sentence(sub, context.sentence) else end
    claim = hit.chunk.text[claim_start:claim_end]
    return {
        "context": asdict(context),
        "semantic": hit.scores.semantic or 0.0,
        "claim": claim,
        "label": answerable and contains_answer([claim], item.answers),
    }


def _without(kb: KnowledgeBase, removed: set[str], weights: TermWeights) -> tuple[int, dict[str, int]]:
    """Term statistics as if the removed chunks were not in the knowledge base at all."""
    frequencies = dict(weights.frequencies)
    if not removed:
        return weights.chunks, frequencies
    assert kb.snapshot is not None
    for chunk_id in removed:
        present = set(tokenize(index_text(kb.snapshot.chunks[chunk_id])))
        for term in frequencies:
            if term in present:
                frequencies[term] -= 1
    return weights.chunks - len(removed), frequencies


def collect(datasets: Path, rows_path: Path, *, per_set: int | None, seed: int, workdir: Path) -> None:
    """Stage 1: ask the tuning questions and write every candidate's features to ``rows_path``."""
    embedder = make_embedder(DEFAULT_EMBEDDER)
    rng = random.Random(seed)
    with rows_path.open("w", encoding="utf-8") as out:
        for name, split, part in TUNING_SETS:
            qa = load_qa(datasets / name, split, part)
            kb = build_kb(qa, embedder, workdir / f"{name}-{qa.split}")
            items = qa.sample(per_set, seed)
            for done, item in enumerate(items, start=1):
                plans = [False] + ([True] if not item.impossible and rng.random() < 0.4 else [])
                for remove in plans:
                    row = _candidate_rows(kb, item, remove_paragraph=remove)
                    if row is not None:
                        row["source"] = f"{name}/{qa.split}/{part}"
                        out.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
                if done % 100 == 0:
                    print(f"{name}: {done}/{len(items)}", file=sys.stderr, flush=True)


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


def fit(rows_path: Path, *, budget: float) -> AnswerModel:
    """Stage 2: fit the sentence model, then the answerability model and its threshold."""
    rows = list(_rows(rows_path))
    per_question = candidate_features(rows)
    languages = [sub.language for _, sub, _ in _question_rows(rows)]
    x = np.array([[f[n] for n in FEATURES] for fs in per_question for f in fs], dtype=np.float64)
    groups = [
        Group(
            language,
            fold_of(row["question_id"]),
            np.array([[f[n] for n in FEATURES] for f in fs], dtype=np.float64),
            np.array([c["label"] for c in row["candidates"]], dtype=bool),
        )
        for fs, row, language in zip(per_question, rows, languages, strict=True)
        if fs
    ]
    sentence = fit_listwise([(g.x, g.y) for g in groups], FEATURES)
    own = sorted(lang for lang in set(languages) if languages.count(lang) >= MIN_LANGUAGE_QUESTIONS)
    selection = {lang: own_model_gain(groups, lang, FEATURES) for lang in own}
    by_language = {
        lang: fit_listwise([(g.x, g.y) for g in groups if g.language == lang], FEATURES)
        for lang in own
        if selection[lang]["own"] > selection[lang]["pooled"]
    }
    features, labels, answerable = [], [], []
    for (row, sub, weights), found in zip(_question_rows(rows), per_question, strict=True):
        stored = row["candidates"]
        model = by_language.get(sub.language, sentence)
        scores = [model.logit(f) for f in found]
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
        features.append([values.get(name, 0.0) for name in DECISION_FEATURES])
        labels.append(1.0 if order and stored[order[0]]["label"] else 0.0)
        answerable.append(row["answerable"])
    fx = np.array(features, dtype=np.float64)
    fy = np.array(labels, dtype=np.float64)
    decision = fit_logistic(fx, fy, DECISION_FEATURES)
    probabilities = np.array(
        [decision.probability(dict(zip(DECISION_FEATURES, f, strict=True))) for f in features]
    )
    removed = np.array([row["removed"] for row in rows])
    impossible = ~np.array(answerable) & ~removed
    negatives = probabilities[removed]
    threshold = threshold_for_budget(negatives, budget)
    language_of = np.array(languages)
    # per language: the budget then holds for each language, not only on average over them
    thresholds = {
        lang: threshold_for_budget(probabilities[removed & (language_of == lang)], budget) for lang in own
    }
    answered = probabilities >= np.array([thresholds.get(lang, threshold) for lang in languages])
    digest = hashlib.sha256(rows_path.read_bytes()).hexdigest()
    meta = {
        "trained_on": [f"{n}/{s}/{p}" for n, s, p in TUNING_SETS],
        "training_rows_sha256": digest,
        "questions": len(rows),
        "candidates": int(x.shape[0]),
        "false_answer_budget": budget,
        "embedder": DEFAULT_EMBEDDER,
        "false_answer_budget_applies_to": "tuning questions asked with their own paragraph removed "
        "(the knowledge base lacks the answer)",
        "tuning_false_answer_rate": round(float(answered[removed].mean()), 4) if removed.any() else None,
        "tuning_false_answer_rate_unanswerable_squad": round(float(answered[impossible].mean()), 4)
        if impossible.any()
        else None,
        "tuning_best_sentence_correct": round(float(fy[np.array(answerable)].mean()), 4),
        "tuning_answer_rate_when_correct": round(float(answered[fy == 1].mean()), 4)
        if (fy == 1).any()
        else None,
        "sentence_model_selection": selection,
        "tuning_by_language": {
            lang: _language_summary(lang, language_of, fy, answerable, removed, answered) for lang in own
        },
    }
    return AnswerModel(
        sentence=sentence,
        decision=decision,
        threshold=threshold,
        meta=meta,
        sentence_by_language=by_language,
        threshold_by_language=thresholds,
    )


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
        "best_sentence_correct": round(float(right[asked].mean()), 4) if asked.any() else None,
        "answer_rate_when_correct": round(float(answered[asked & (right == 1)].mean()), 4)
        if (asked & (right == 1)).any()
        else None,
        "false_answer_rate": round(float(answered[mine & removed].mean()), 4)
        if (mine & removed).any()
        else None,
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: collect (unless ``--rows`` exists and ``--reuse-rows``), fit, write the model."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--datasets", type=Path, required=True, help="folder holding squad2_dev_half/, cmrc2018/"
    )
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parents[1] / "pipeline" / "answer_model.json"
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
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not (args.reuse_rows and args.rows.is_file()):
        collect(args.datasets, args.rows, per_set=args.per_set, seed=args.seed, workdir=args.workdir)
    model = fit(args.rows, budget=args.budget)
    args.out.write_text(json.dumps(model.to_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in model.to_dict().items() if not k.endswith("_model")}, indent=1))


if __name__ == "__main__":
    main()
