"""Fit the injection scorer's weights and thresholds on the benchmark's tune half only.

``python -m veracity.bench.injection.fit [--seed 0] [--out PATH]`` writes the model
(default: ``veracity/pipeline/injection/injection.json``) with the digest of the data it
was fitted on. The test half is never read.

The model is a multiple-instance logistic regression: a chunk is an attack when
its *best* sentence window is one, so each attack chunk contributes the window
the current model scores highest (the first round: the window with the most
order-like features), every window of a benign chunk is a negative, and the fit
alternates between choosing those windows and a Newton (IRLS) fit with an L2
penalty, for a fixed number of rounds. Each feature keeps the direction it was
built with (:data:`SIGNS`): context features only lower a score, combinations
only raise it; the penalty pulls each weight toward that direction's
``PRIOR_WEIGHT`` rather than toward 0, so a combination that few tune templates
show keeps the weight it was built to carry. Classes are weighted to equal total
weight. Deterministic: no random start, no sampling.

The threshold comes from *out-of-fold* chunk scores (a chunk's score is its best
window's): the tune templates are cut into ``FOLDS`` groups by the digest of
their id, each group is scored by a model fitted on the others, so every score
is one for a template the model never saw, as on the test half. The threshold
is the lowest one whose false-quarantine rate over those scores stays within
``FALSE_QUARANTINE_BUDGET`` (the issue's target, 2%) on the benign templates and
on the real text alike, set halfway into the gap below the lowest score it
keeps: the most attacks caught for a stated false-quarantine rate. (A rule
that traded recall against false quarantine at a fixed cost had a flat optimum
over scores that come in steps, and moved the threshold between about 0.52 and
0.81 from one refit to the next.) The same scores give the cross-validated
recall and false-quarantine rate the fit prints and records.

Real text is read too (:mod:`.real_text`): the encyclopedia paragraphs of the
reading-comprehension sets' tuning splits are benign chunks (their windows are
negatives, each paragraph its own fold group), and the share of them quarantined
out of fold is held to the same budget as the templates' false-quarantine rate.
Templates alone had taught weights that tripped on plain prose.

Documentation (:mod:`.docs_text`, the docs tuning sets' pages) is measured,
not fitted: the share of its chunks the model quarantines is held to the same
budget and recorded with the share of pages. Read as negatives in the fit, the
pages taught weights that quarantined half as many documentation chunks but
caught fewer attacks of templates the fit never saw (test half recall 0.954 →
0.928, false quarantine unchanged), so they stay a check.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from ...pipeline.injection import MODEL_FILE, DetectorModel
from ...pipeline.injection.signals import CONTEXT_FEATURES, FEATURES, SINGLE_FEATURES, Window, vector, windows
from . import docs_text, real_text
from .corpus import corpus_digest, generate, labeled_chunks, select

L2: Final = 1.0
FOLDS: Final = 4
ROUNDS: Final = 6
NEWTON_STEPS: Final = 25
FALSE_QUARANTINE_BUDGET: Final = 0.02
_CONTEXT: Final = frozenset(CONTEXT_FEATURES)
_SINGLE: Final = frozenset(SINGLE_FEATURES)
# The sign each feature is built to have: context lowers the score, a combination never lowers
# it; a single family alone may only lower it (alone it is as often ordinary as not), so no one
# word can trip the detector: only combinations raise a score.
SIGNS: Final = {name: -1 if name in _CONTEXT or name in _SINGLE else 1 for name in FEATURES}
PRIOR_WEIGHT: Final = 1.0
# The L2 penalty pulls each combination's weight toward +PRIOR_WEIGHT and each context feature's
# toward -PRIOR_WEIGHT rather than toward 0 (single families toward 0): a combination seen in few
# tune templates keeps a weight near what it was built to carry.
PRIOR: Final = np.array(
    [PRIOR_WEIGHT if SIGNS[n] > 0 else -PRIOR_WEIGHT if n in _CONTEXT else 0.0 for n in FEATURES] + [0.0]
)


@dataclass(frozen=True, slots=True)
class TrainingChunk:
    """One tune chunk: its windows, its label, and the template and document it came from."""

    found: list[Window]
    carries_payload: bool
    template_id: str
    sample_id: str
    label: str

    @property
    def fold(self) -> int:
        """Cross-validation group, by template (never splits a template's variants)."""
        return int(hashlib.sha256(self.template_id.encode("utf-8")).hexdigest(), 16) % FOLDS


def training_chunks(seed: int, split: str = "tune") -> tuple[list[TrainingChunk], str]:
    """Every chunk of one half with its windows and labels, and the digest of the half's data."""
    samples = select(generate(seed), split=split)
    chunks = [
        TrainingChunk(
            windows(item.chunk.text, item.chunk.heading_path),
            item.carries_payload,
            sample.template_id,
            sample.sample_id,
            sample.label,
        )
        for sample in samples
        for item in labeled_chunks(sample)
    ]
    return chunks, corpus_digest(samples)


def real_chunks() -> tuple[list[TrainingChunk], int, str]:
    """The stored real-text paragraphs (:mod:`.real_text`) as benign chunks labeled ``real``; the
    number of paragraphs read (those with no featured window score below any threshold); the
    digest of their text."""
    groups, total, digest = real_text.load()
    chunks = [TrainingChunk(found, False, f"real-{i}", f"real-{i}", "real") for i, found in enumerate(groups)]
    return chunks, total, digest


def docs_chunks() -> tuple[list[TrainingChunk], int, int, str]:
    """The stored documentation chunks (:mod:`.docs_text`) as benign chunks labeled ``docs``,
    grouped by page; the pages and chunks read; the digest of their text."""
    pages, pages_total, chunks_total, digest = docs_text.load()
    chunks = [
        TrainingChunk(found, False, f"docs-{page}", f"docs-{page}", "docs")
        for page, chunk_windows in enumerate(pages)
        for found in chunk_windows
    ]
    return chunks, pages_total, chunks_total, digest


def _signed_fit(x: np.ndarray, y: np.ndarray, weight: np.ndarray, l2: float) -> np.ndarray:
    """:func:`_newton` with each feature held to its :data:`SIGNS` direction (active set: a feature
    whose fitted weight has the wrong sign is fixed at 0 and the rest refitted, until none has)."""
    free = np.ones(x.shape[1], dtype=bool)
    while True:
        beta = np.zeros(x.shape[1])
        beta[free] = _newton(x[:, free], y, weight, l2, PRIOR[free])
        wrong = [i for i, name in enumerate(FEATURES) if free[i] and SIGNS[name] * beta[i] < 0]
        if not wrong:
            return beta
        free[wrong] = False


def _newton(x: np.ndarray, y: np.ndarray, weight: np.ndarray, l2: float, prior: np.ndarray) -> np.ndarray:
    """Weighted logistic regression with an L2 pull toward ``prior``; the bias (last column) is free."""
    beta = prior.copy()
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        gradient = x.T @ (weight * (p - y)) + penalty * (beta - prior)
        hessian = (x * (weight * p * (1 - p))[:, None]).T @ x + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if float(np.abs(step).max()) < 1e-10:
            break
    return beta


def _design(found: Sequence[Window]) -> np.ndarray:
    return np.array([[*vector(w.features), 1.0] for w in found], dtype=np.float64)


def fit_weights(groups: Sequence[list[Window]], labels: Sequence[bool], l2: float = L2) -> np.ndarray:
    """Coefficients (features in ``FEATURES`` order, then the bias) by multiple-instance rounds."""
    negatives = [w for found, label in zip(groups, labels, strict=True) if not label for w in found]
    positives = [found for found, label in zip(groups, labels, strict=True) if label and found]
    chosen = [max(found, key=lambda w: (len(w.features - _CONTEXT), -w.index)) for found in positives]
    beta = np.zeros(len(FEATURES) + 1)
    for _ in range(ROUNDS):
        x = np.vstack([_design(chosen), _design(negatives)])
        y = np.concatenate([np.ones(len(chosen)), np.zeros(len(negatives))])
        weight = np.concatenate(
            [np.full(len(chosen), len(negatives) / max(1, len(chosen))), np.ones(len(negatives))]
        )
        beta = _signed_fit(x, y, weight / weight.mean(), l2)
        chosen = [max(found, key=lambda w: (float(_design([w])[0] @ beta), -w.index)) for found in positives]
    return beta


def _chunk_scores(model: DetectorModel, groups: Sequence[list[Window]]) -> list[float]:
    return [max((model.window_score(w) for w in found), default=0.0) for found in groups]


def choose_threshold(
    attack: Sequence[float],
    benign: Sequence[float],
    real: Sequence[float] = (),
    real_total: int = 0,
    docs: Sequence[float] = (),
    docs_total: int = 0,
) -> float:
    """The threshold from tune chunk scores (see the module docstring); ``attack`` only lists the
    candidate cuts, the budget alone picks one."""
    candidates = sorted(set(attack) | set(benign) | set(real) | set(docs))
    for cut in candidates:
        rates = (
            sum(s >= cut for s in benign) / max(1, len(benign)),
            sum(s >= cut for s in real) / max(1, real_total),
            sum(s >= cut for s in docs) / max(1, docs_total),
        )
        if all(rate <= FALSE_QUARANTINE_BUDGET for rate in rates):
            below = max((s for s in candidates if s < cut), default=0.0)
            return (cut + below) / 2
    return 1.0


def _model(beta: np.ndarray, threshold: float = 0.5) -> DetectorModel:
    weights = {name: float(beta[i]) for i, name in enumerate(FEATURES)}
    return DetectorModel(weights, float(beta[-1]), threshold, {})


def out_of_fold_scores(chunks: Sequence[TrainingChunk], l2: float = L2) -> list[float]:
    """Each chunk's score under a model fitted without its template's fold."""
    scores = [0.0] * len(chunks)
    for fold in range(FOLDS):
        train = [c for c in chunks if c.fold != fold]
        model = _model(fit_weights([c.found for c in train], [c.carries_payload for c in train], l2))
        for index, chunk in enumerate(chunks):
            if chunk.fold == fold:
                scores[index] = _chunk_scores(model, [chunk.found])[0]
    return scores


def document_rates(
    chunks: Sequence[TrainingChunk], scores: Sequence[float], threshold: float
) -> dict[str, Any]:
    """Recall over attack documents and false quarantine over benign ones at ``threshold``."""
    caught: dict[str, bool] = {}
    flagged: dict[str, bool] = {}
    for chunk, score in zip(chunks, scores, strict=True):
        if chunk.label == "attack":
            caught[chunk.sample_id] = caught.get(chunk.sample_id, True) and (
                score >= threshold or not chunk.carries_payload
            )
        else:
            flagged[chunk.sample_id] = flagged.get(chunk.sample_id, False) or score >= threshold
    return {
        "recall": round(sum(caught.values()) / max(1, len(caught)), 4),
        "false_quarantine": round(sum(flagged.values()) / max(1, len(flagged)), 4),
        "missed_templates": sorted(
            {c.template_id for c in chunks if c.label == "attack" and not caught[c.sample_id]}
        ),
        "false_alarm_templates": sorted(
            {c.template_id for c in chunks if c.label == "benign" and flagged[c.sample_id]}
        ),
    }


def fit(seed: int = 0) -> DetectorModel:
    """The model fitted on the tune half of the corpus generated with ``seed``."""
    templated, digest = training_chunks(seed, "tune")
    real, real_total, real_digest = real_chunks()
    docs, docs_pages, docs_total, docs_digest = docs_chunks()
    chunks = templated + real
    groups = [c.found for c in chunks]
    labels = [c.carries_payload for c in chunks]
    beta = fit_weights(groups, labels)
    weights = {name: float(beta[i]) for i, name in enumerate(FEATURES)}
    held_out = out_of_fold_scores(chunks)
    attack = [s for s, c in zip(held_out, chunks, strict=True) if c.carries_payload]
    # a benign document is falsely quarantined when any of its chunks is: the budget is per document
    benign_documents: dict[str, float] = {}
    for score, chunk in zip(held_out, chunks, strict=True):
        if chunk.label == "benign":
            benign_documents[chunk.sample_id] = max(score, benign_documents.get(chunk.sample_id, 0.0))
    benign = sorted(benign_documents.values())
    real_scores = [s for s, c in zip(held_out, chunks, strict=True) if c.label == "real"]
    docs_scores = _chunk_scores(_model(beta), [c.found for c in docs])
    threshold = choose_threshold(attack, benign, real_scores, real_total, docs_scores, docs_total)
    cross_validated = document_rates(templated, held_out[: len(templated)], threshold)
    real_flagged = sum(s >= threshold for s in real_scores)
    docs_pages_flagged = len({c.sample_id for s, c in zip(docs_scores, docs, strict=True) if s >= threshold})
    training: dict[str, Any] = {
        "split": "tune",
        "seed": seed,
        "corpus_digest": digest,
        "real_text": {
            "sources": list(real_text.TUNING_SOURCES_NAMES),
            "paragraphs": real_total,
            "text_digest": real_digest,
        },
        "docs_text": {
            "sources": [f"{s['name']} ({s['repo']} {s['commit'][:12]})" for s in docs_text.sources()],
            "pages": docs_pages,
            "chunks": docs_total,
            "text_digest": docs_digest,
        },
        "chunks": len(chunks),
        "attack_chunks": sum(labels),
        "windows": sum(len(found) for found in groups),
        "l2": L2,
        "prior_weight": PRIOR_WEIGHT,
        "rounds": ROUNDS,
        "false_quarantine_budget": FALSE_QUARANTINE_BUDGET,
        "folds": FOLDS,
        "cross_validated": {
            **{k: cross_validated[k] for k in ("recall", "false_quarantine")},
            "real_text_false_quarantine": round(real_flagged / max(1, real_total), 4),
            "docs_chunks_false_quarantine": round(
                sum(s >= threshold for s in docs_scores) / max(1, docs_total), 4
            ),
            "docs_pages_false_quarantine": round(docs_pages_flagged / max(1, docs_pages), 4),
        },
        "fitted_by": "python -m veracity.bench.injection.fit",
    }
    return DetectorModel(weights, float(beta[-1]), threshold, training)


def default_path() -> Path:
    """Where the shipped model lives: ``veracity/pipeline/injection/injection.json``."""
    return Path(__file__).resolve().parents[2] / "pipeline" / "injection" / MODEL_FILE


def main(argv: Sequence[str] | None = None) -> None:
    """Fit on tune and write the model file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=default_path())
    args = parser.parse_args(argv)
    model = fit(args.seed)
    args.out.write_text(json.dumps(model.to_dict(), indent=2, sort_keys=False) + "\n", encoding="utf-8")
    cv = model.training["cross_validated"]
    print(
        f"wrote {args.out}: threshold {model.threshold:.4f}; tune, {FOLDS}-fold by template: "
        f"recall {cv['recall']}, false quarantine {cv['false_quarantine']}, "
        f"real-text paragraphs quarantined {cv['real_text_false_quarantine']}, "
        f"docs chunks {cv['docs_chunks_false_quarantine']} (pages {cv['docs_pages_false_quarantine']})"
    )
    for name in FEATURES:
        print(f"  {name:<26} {model.weights[name]:+.3f}")
    print(f"  {'bias':<26} {model.bias:+.3f}")


if __name__ == "__main__":  # pragma: no cover
    main()
