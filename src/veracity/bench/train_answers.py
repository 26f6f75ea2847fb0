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
2. *fit* (fast): a logistic sentence model on the candidates, then, with it,
   the answerability features of each question (:func:`decision_features`)
   labelled "the best claim contains a gold answer", and a logistic
   answerability model; the threshold is the lowest one whose false-answer
   rate on the tuning questions without an answer in evidence stays within
   ``--budget``.
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
from ..model.contracts import Principal
from ..pipeline.decision import DECISION_FEATURES, AnswerModel, LogisticModel, Ranked, decision_features
from ..pipeline.engine import KnowledgeBase, sentence_embedding
from ..pipeline.sentences import (
    FEATURES,
    SentenceContext,
    TermWeights,
    local_weights,
    sentence_contexts,
    sentence_features,
)
from ..text.questions import SubQuestion, split_subquestions
from ..text.tokens import tokenize
from .answers import AS_OF, ROLE, TARGET_VERSION, TENANT, build_kb, contains_answer
from .qa import QAItem, load_qa

TUNING_SETS = (("squad2_dev_half", "dev", "tune"), ("cmrc2018", "trial", "all"))
"""(data-set folder, split, part) of every tuning source."""


def _fit_logistic(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], names: Sequence[str], l2: float = 1.0
) -> LogisticModel:
    """L2-regularised logistic regression by Newton's method on standardised features."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([np.ones((x.shape[0], 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    penalty = np.eye(z.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -30, 30)))
        gradient = z.T @ (p - y) + penalty @ w
        hessian = (z * (p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return LogisticModel(
        names=tuple(names),
        weights=tuple(float(v) for v in w[1:]),
        bias=float(w[0]),
        mean=tuple(float(v) for v in mean),
        scale=tuple(float(v) for v in scale),
    )


def _fit_listwise(
    groups: Sequence[tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]],
    names: Sequence[str],
    l2: float = 1e-3,
    steps: int = 400,
) -> LogisticModel:
    """A linear scorer trained to put the softmax mass of each question on its right sentences.

    Only questions with at least one right and one wrong candidate teach the
    ranking; Adam on standardised features. The bias is then set so the
    scores read as log-odds of "this sentence holds the answer" over all
    candidates (a pointwise calibration on top of the listwise order).
    """
    useful = [(x, y) for x, y in groups if y.any() and not y.all()]
    stacked = np.vstack([x for x, _ in groups])
    mean = stacked.mean(axis=0)
    scale = stacked.std(axis=0)
    scale[scale < 1e-9] = 1.0
    standard = [((x - mean) / scale, y) for x, y in useful]
    w = np.zeros(len(names))
    first, second = np.zeros_like(w), np.zeros_like(w)
    for step in range(1, steps + 1):
        gradient = l2 * w
        for z, y in standard:
            logits = z @ w
            p = np.exp(logits - logits.max())
            p /= p.sum()
            q = p * y
            q /= q.sum()
            gradient += z.T @ (p - q)
        gradient /= len(standard)
        first = 0.9 * first + 0.1 * gradient
        second = 0.999 * second + 0.001 * gradient**2
        w -= 0.05 * (first / (1 - 0.9**step)) / (np.sqrt(second / (1 - 0.999**step)) + 1e-8)
    z_all = (stacked - mean) / scale
    labels = np.concatenate([y for _, y in groups]).astype(np.float64)
    scores = z_all @ w
    bias = 0.0
    for _ in range(50):  # one-dimensional Newton for the intercept
        p = 1.0 / (1.0 + np.exp(-np.clip(scores + bias, -30, 30)))
        bias -= (p - labels).sum() / max((p * (1 - p)).sum(), 1e-9)
    return LogisticModel(
        names=tuple(names),
        weights=tuple(float(v) for v in w),
        bias=float(bias),
        mean=tuple(float(v) for v in mean),
        scale=tuple(float(v) for v in scale),
    )


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
            {
                "context": asdict(context),
                "semantic": hit.scores.semantic or 0.0,
                "claim": hit.chunk.text[claim_start:end],
                "label": answerable and contains_answer([hit.chunk.text[claim_start:end]], item.answers),
            }
            for hit, _, end, claim_start, context in contexts
        ],
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


def collect(datasets: Path, rows_path: Path, *, per_set: int, seed: int, workdir: Path) -> None:
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
    x = np.array([[f[n] for n in FEATURES] for fs in per_question for f in fs], dtype=np.float64)
    groups = [
        (
            np.array([[f[n] for n in FEATURES] for f in fs], dtype=np.float64),
            np.array([c["label"] for c in row["candidates"]], dtype=bool),
        )
        for fs, row in zip(per_question, rows, strict=True)
        if fs
    ]
    sentence = _fit_listwise(groups, FEATURES)
    features, labels, answerable = [], [], []
    for (row, sub, weights), found in zip(_question_rows(rows), per_question, strict=True):
        stored = row["candidates"]
        scores = [sentence.logit(f) for f in found]
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
        values = decision_features(sub, ranked, frozenset(tokenize(evidence_text)), evidence_text, weights)
        features.append([values[name] for name in DECISION_FEATURES])
        labels.append(1.0 if order and stored[order[0]]["label"] else 0.0)
        answerable.append(row["answerable"])
    fx = np.array(features, dtype=np.float64)
    fy = np.array(labels, dtype=np.float64)
    decision = _fit_logistic(fx, fy, DECISION_FEATURES)
    probabilities = np.array(
        [decision.probability(dict(zip(DECISION_FEATURES, f, strict=True))) for f in features]
    )
    negatives = probabilities[~np.array(answerable)]
    threshold = _threshold(negatives, budget)
    digest = hashlib.sha256(rows_path.read_bytes()).hexdigest()
    meta = {
        "trained_on": [f"{n}/{s}/{p}" for n, s, p in TUNING_SETS],
        "training_rows_sha256": digest,
        "questions": len(rows),
        "candidates": int(x.shape[0]),
        "false_answer_budget": budget,
        "embedder": DEFAULT_EMBEDDER,
        "tuning_false_answer_rate": round(float((negatives >= threshold).mean()), 4)
        if negatives.size
        else None,
        "tuning_best_sentence_correct": round(float(fy[np.array(answerable)].mean()), 4),
        "tuning_answer_rate_when_correct": round(float((probabilities[fy == 1] >= threshold).mean()), 4)
        if (fy == 1).any()
        else None,
    }
    return AnswerModel(sentence=sentence, decision=decision, threshold=threshold, meta=meta)


def _threshold(negative_scores: npt.NDArray[np.float64], budget: float) -> float:
    """The lowest threshold whose share of negatives at or above it is within ``budget``."""
    if negative_scores.size == 0:
        return 0.5
    ordered = np.sort(negative_scores)[::-1]
    allowed = int(np.floor(budget * ordered.size))
    return float(ordered[allowed]) + 1e-9 if allowed < ordered.size else 0.0


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
    parser.add_argument("--per-set", type=int, default=1500, help="questions sampled per tuning set")
    parser.add_argument("--budget", type=float, default=0.2, help="false-answer budget on tuning negatives")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not (args.reuse_rows and args.rows.is_file()):
        collect(args.datasets, args.rows, per_set=args.per_set, seed=args.seed, workdir=args.workdir)
    model = fit(args.rows, budget=args.budget)
    args.out.write_text(json.dumps(model.to_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in model.to_dict().items() if not k.endswith("_model")}, indent=1))


if __name__ == "__main__":
    main()
