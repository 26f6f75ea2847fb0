"""The answer decision: which sentence answers a sub-question, and whether to say it at all.

Two small logistic models, trained offline on tuning splits only
(``python -m veracity.bench.train_answers``) and shipped as
``answer_model.json`` with the digest of their training data, one file per
embedder (:data:`MODEL_FILES`: the features hold the embedder's cosines, whose
scale is its own; a knowledge base answers with the model of the embedder that
built its index, :func:`model_for_embedder`):

- the *sentence model* scores each candidate sentence
  (:mod:`veracity.pipeline.candidates`); the best one is the claim. A language
  with enough tuning questions has its own (Chinese character overlap and
  English word overlap do not mean the same); any other language gets the
  model fitted on all of them;
- the *answerability model* scores the sub-question from the best candidate
  and the evidence as a whole (:data:`DECISION_FEATURES`); at or above the
  shipped threshold the claim is said, below it the sub-question counts as
  not covered. The threshold was chosen on the tuning data for a stated
  false-answer budget (recorded in the file), per language where the tuning
  data has one (so the budget holds for each, not only on average), else
  over all of them.

Both the features and the scores go to the trace, so a person can see why a
sub-question was answered or not.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from ..index.embedders import DEFAULT_EMBEDDER
from ..model.contracts import Document, Hit, Trust
from ..model.errors import ConfigError
from ..model.governance import NON_OFFICIAL_MARKED
from ..text.questions import AnswerType, SubQuestion
from ..text.tokens import coverage_tokens, is_cjk_term
from .candidates import FEATURES, Candidate, Embed, TermWeights, candidates, weighted_coverage
from .choice import CHOICE_FEATURES, rechoose
from .injection import MODEL_TURN

if TYPE_CHECKING:
    from ..reader.choice import ChoiceModel
    from ..reader.model import ReadingModel

DECISION_FEATURES: Final = (
    "best_sentence",
    "margin",
    "coverage",
    "coverage_context",
    "evidence_coverage",
    "missing_max_idf",
    "best_missing_max_idf",
    "numbers_missing",
    "unseen_weight",
    "type_match",
    "dense",
    "chunk_semantic",
    "rank",
    "yes_no",
)
"""Features of the answerability model (see :func:`decision_features`)."""
DECISION_FEATURES_WITH_READER: Final = (*DECISION_FEATURES, "reader")
"""The same and the sentence reader's logit, for a model with a choice stage."""

MODEL_FILE: Final = "answer_model.json"


@dataclass(frozen=True, slots=True)
class LogisticModel:
    """``sigmoid(bias + Σ weight · (x - mean) / scale)`` over named features."""

    names: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]

    def logit(self, features: Mapping[str, float]) -> float:
        """The linear score; a missing feature counts as its training mean."""
        total = self.bias
        for name, weight, mean, scale in zip(self.names, self.weights, self.mean, self.scale, strict=True):
            total += weight * (features.get(name, mean) - mean) / scale
        return total

    def probability(self, features: Mapping[str, float]) -> float:
        """The logistic of :meth:`logit`."""
        value = self.logit(features)
        return 1.0 / (1.0 + math.exp(-value)) if value > -500 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form."""
        return {
            "features": list(self.names),
            "weights": [round(w, 6) for w in self.weights],
            "bias": round(self.bias, 6),
            "mean": [round(m, 6) for m in self.mean],
            "scale": [round(s, 6) for s in self.scale],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LogisticModel:
        """Read :meth:`to_dict`'s form; ``ConfigError`` when the parts disagree."""
        names = tuple(data["features"])
        parts = [tuple(float(v) for v in data[key]) for key in ("weights", "mean", "scale")]
        if any(len(part) != len(names) for part in parts) or any(s <= 0 for s in parts[2]):
            raise ConfigError("answer model: weights, mean and scale must match the features (scale > 0)")
        return cls(names=names, weights=parts[0], bias=float(data["bias"]), mean=parts[1], scale=parts[2])


@dataclass(frozen=True, slots=True)
class AnswerModel:
    """The sentence models, the answerability model and its thresholds.

    ``sentence`` and ``threshold`` serve every language; ``sentence_by_language``
    and ``threshold_by_language`` override them for the languages (``zh``,
    ``en``) the tuning data holds enough questions of."""

    sentence: LogisticModel
    decision: LogisticModel
    threshold: float
    meta: Mapping[str, Any]
    sentence_by_language: Mapping[str, LogisticModel] = field(default_factory=dict)
    threshold_by_language: Mapping[str, float] = field(default_factory=dict)
    choice: LogisticModel | None = None
    """The second stage of sentence choice (:mod:`veracity.pipeline.choice`), fitted with the
    sentence reader its ``meta["chooser"]`` names; ``None``: the first stage alone."""

    def sentence_for(self, language: str) -> LogisticModel:
        """The sentence model for a question in ``language``."""
        return self.sentence_by_language.get(language, self.sentence)

    def threshold_for(self, language: str) -> float:
        """The answerability threshold for a question in ``language``."""
        return self.threshold_by_language.get(language, self.threshold)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form (what ``answer_model.json`` holds)."""
        return {
            "sentence_model": self.sentence.to_dict(),
            "sentence_models_by_language": {
                language: model.to_dict() for language, model in sorted(self.sentence_by_language.items())
            },
            "decision_model": self.decision.to_dict(),
            **({"choice_model": self.choice.to_dict()} if self.choice is not None else {}),
            "threshold": round(self.threshold, 6),
            "thresholds_by_language": {
                language: round(value, 6) for language, value in sorted(self.threshold_by_language.items())
            },
            **self.meta,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnswerModel:
        """Read :meth:`to_dict`'s form."""
        try:
            sentence = LogisticModel.from_dict(data["sentence_model"])
            decision = LogisticModel.from_dict(data["decision_model"])
            threshold = float(data["threshold"])
            by_language = {
                str(language): LogisticModel.from_dict(model)
                for language, model in data.get("sentence_models_by_language", {}).items()
            }
            thresholds = {str(k): float(v) for k, v in data.get("thresholds_by_language", {}).items()}
            choice = LogisticModel.from_dict(data["choice_model"]) if "choice_model" in data else None
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(f"answer model is malformed: {exc!r}") from None
        # a feature no code computes would read as its training mean, silently: refuse the model
        known = [(sentence, FEATURES), (decision, DECISION_FEATURES_WITH_READER)]
        known += [(model, FEATURES) for model in by_language.values()]
        known += [(choice, CHOICE_FEATURES)] if choice is not None else []
        unknown = sorted({name for model, names in known for name in model.names if name not in names})
        if unknown:
            raise ConfigError(f"answer model names features this version does not compute: {unknown}")
        meta = {k: v for k, v in data.items() if k not in _MODEL_KEYS}
        return cls(
            sentence=sentence,
            decision=decision,
            threshold=threshold,
            meta=meta,
            sentence_by_language=by_language,
            threshold_by_language=thresholds,
            choice=choice,
        )


_MODEL_KEYS: Final = (
    "sentence_model",
    "sentence_models_by_language",
    "decision_model",
    "choice_model",
    "threshold",
    "thresholds_by_language",
)


MODEL_FILES: Final = {DEFAULT_EMBEDDER: MODEL_FILE, "e5": "answer_model.e5.json"}
"""The shipped model of each embedder: the features hold its cosines, whose scale is its own."""
_MODEL_ID_PREFIXES: Final = {"use-multilingual": DEFAULT_EMBEDDER, "multilingual-e5-small": "e5"}


@lru_cache(maxsize=4)
def shipped_model(embedder: str = DEFAULT_EMBEDDER) -> AnswerModel:
    """The model shipped for ``embedder`` (a name of :data:`MODEL_FILES`)."""
    text = (resources.files("veracity") / "pipeline" / MODEL_FILES[embedder]).read_text(encoding="utf-8")
    model = AnswerModel.from_dict(json.loads(text))
    if model.meta.get("embedder", DEFAULT_EMBEDDER) != embedder:
        fitted_on = model.meta.get("embedder")
        raise ConfigError(f"{MODEL_FILES[embedder]} was fitted on {fitted_on!r}, not {embedder!r}")
    return model


def model_for_embedder(model_id: str | None) -> AnswerModel:
    """The shipped model for the embedder whose ``model_id`` built the index; the default
    embedder's for any other (the fake embedder of tests, or no dense channel)."""
    name = next(
        (n for prefix, n in _MODEL_ID_PREFIXES.items() if model_id and model_id.startswith(prefix)),
        DEFAULT_EMBEDDER,
    )
    return shipped_model(name)


@dataclass(frozen=True, slots=True)
class Ranked:
    """A candidate as the decision sees it: its sentence score, claim text, features, chunk cosine."""

    score: float
    claim: str
    features: Mapping[str, float]
    semantic: float | None
    context: str = ""


def rank_candidates(model: LogisticModel, found: Sequence[Candidate]) -> list[tuple[Ranked, Candidate]]:
    """Candidates with their sentence-model logits, best first (ties: evidence order, position)."""
    scored = [(model.logit(c.features), index, c) for index, c in enumerate(found)]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [
        (Ranked(score, c.claim, c.features, _semantic(c.hit.scores.semantic), c.context), c)
        for score, _, c in scored
    ]


def decision_features(
    sub: SubQuestion,
    ranked: Sequence[Ranked],
    evidence_tokens: frozenset[str],
    evidence_text: str,
    weights: TermWeights,
) -> dict[str, float]:
    """The answerability features of a sub-question given its ranked candidates.

    ``margin``: best sentence score minus the best score of a different claim;
    ``best_missing_max_idf``: as ``missing_max_idf`` but over the best
    sentence with its subject and the sentence before it; ``numbers_missing``:
    share of the numbers the question names that it does not hold;
    ``missing_max_idf``: the largest weighted IDF of a term no evidence chunk
    holds, over the largest weighted IDF of any of its terms (0 when nothing
    is missing); ``unseen_weight``: the share of the weight carried by terms
    that no chunk the principal may use holds at all.
    """
    best = ranked[0] if ranked else None
    best_score = best.score if best is not None else -10.0
    second = next((r.score for r in ranked[1:] if best is None or r.claim != best.claim), best_score - 5.0)
    term_weights = [weights.of(t) * sub.weight(i) for i, t in enumerate(sub.terms)]
    top = max(term_weights, default=1.0) or 1.0
    missing = [
        w
        for t, w in zip(sub.terms, term_weights, strict=True)
        if t not in evidence_tokens and not (is_cjk_term(t) and t in evidence_text)
    ]
    unseen = sum(w for t, w in zip(sub.terms, term_weights, strict=True) if not weights.seen(t))
    around = best.context if best is not None else ""
    around_tokens = coverage_tokens(around)
    missing_around = [
        w
        for t, w in zip(sub.terms, term_weights, strict=True)
        if t not in around_tokens and not (is_cjk_term(t) and t in around)
    ]
    numbers = [t for t in sub.terms if any(ch.isdigit() for ch in t)]
    features = best.features if best is not None else {}
    found: dict[str, float] = {
        "best_sentence": best_score,
        "margin": best_score - second,
        "coverage": features.get("coverage", 0.0),
        "coverage_context": features.get("coverage_context", 0.0),
        "evidence_coverage": weighted_coverage(sub, weights, evidence_tokens, evidence_text),
        "missing_max_idf": max(missing, default=0.0) / top,
        "best_missing_max_idf": max(missing_around, default=0.0) / top,
        "numbers_missing": (
            sum(n not in around_tokens and n not in around for n in numbers) / len(numbers)
            if numbers
            else 0.0
        ),
        "unseen_weight": unseen / (sum(term_weights) or 1.0),
        "type_match": features.get("type_match", 0.0),
        "rank": features.get("rank", 0.0),
        "yes_no": 1.0 if sub.answer_type is AnswerType.YES_NO else 0.0,
    }
    # without the dense channel these stay out, and the model reads their training mean
    if "dense" in features:
        found["dense"] = features["dense"]
    if best is not None and best.semantic is not None:
        found["chunk_semantic"] = best.semantic
    if "reader" in features:  # the sentence reader read it (a model with a choice stage)
        found["reader"] = features["reader"]
    return found


@dataclass(frozen=True, slots=True)
class AnswerInputs:
    """What the answer step needs beyond the packet: term statistics, vectors, the model, policy."""

    weights: TermWeights = field(default_factory=lambda: TermWeights(chunks=0, frequencies={}))
    question_vector: npt.NDArray[np.float32] | None = None
    embed: Embed | None = None
    model: AnswerModel | None = None
    version: str | None = None
    """The product version asked about (``None``: no particular one)."""
    non_official: str = NON_OFFICIAL_MARKED
    reader: ReadingModel | None = None
    """The reader (:mod:`veracity.pipeline.reading`) decides when given; else the logistic models."""
    chooser: ChoiceModel | None = None
    """The sentence reader for a model with a choice stage; ``None``: the model's own, loaded once."""


@dataclass(frozen=True, slots=True)
class Decision:
    """How one sub-question was decided: the sources that decided it (``official`` or
    ``community``), its answerability score, the verdict, the features, the question's terms
    no evidence holds, and the threshold."""

    index: int
    score: float
    answered: bool
    features: tuple[tuple[str, float], ...]
    missing_terms: tuple[str, ...] = ()
    threshold: float = 0.0
    tier: str = "official"


def evidence_terms(hits: Sequence[Hit], documents: Mapping[str, Document]) -> tuple[frozenset[str], str]:
    """Tokens and text of ``hits`` with their heading paths and document titles."""
    text = "\n".join(
        " ".join((documents[h.chunk.document_id].title, *h.chunk.heading_path, h.chunk.text)) for h in hits
    )
    return coverage_tokens(text), text


def trust_tiers(hits: Sequence[Hit], documents: Mapping[str, Document]) -> tuple[list[Hit], list[Hit]]:
    """Official hits and community hits (untrusted sources never answer)."""
    official = [h for h in hits if documents[h.chunk.document_id].trust is Trust.OFFICIAL]
    community = [h for h in hits if documents[h.chunk.document_id].trust is Trust.COMMUNITY]
    return official, community


def decide(
    index: int,
    sub: SubQuestion,
    hits: Sequence[Hit],
    documents: Mapping[str, Document],
    inputs: AnswerInputs,
    *,
    tier: str = "official",
) -> tuple[Decision, Candidate | None]:
    """Score the sentences of ``hits`` for ``sub``; the best candidate when the model says it is
    answered. Coverage is measured on ``hits`` alone, so words of other sources (another trust
    tier, quarantined chunks) never make up for what these sources lack."""
    model = inputs.model or shipped_model()
    found = candidates(
        sub, hits, documents, inputs.weights, question_vector=inputs.question_vector, embed=inputs.embed
    )
    if tier != "official":
        found = [c for c in found if not reported_model_turn(c.claim)]
    ranked = rank_candidates(model.sentence_for(sub.language), found)
    if model.choice is not None:
        chooser = inputs.chooser or chooser_of(model)
        ranked = rechoose(model.choice, chooser, sub.text, ranked)
    evidence_tokens, evidence_text = evidence_terms(hits, documents)
    features = decision_features(sub, [r for r, _ in ranked], evidence_tokens, evidence_text, inputs.weights)
    score = model.decision.probability(features)
    threshold = model.threshold_for(sub.language)
    answered = bool(ranked) and score >= threshold
    missing = tuple(
        t for t in sub.terms if t not in evidence_tokens and not (is_cjk_term(t) and t in evidence_text)
    )
    decision = Decision(
        index=index,
        score=score,
        answered=answered,
        features=tuple(sorted(features.items())),
        missing_terms=missing,
        threshold=threshold,
        tier=tier,
    )
    return decision, (ranked[0][1] if answered else None)


def chooser_of(model: AnswerModel) -> ChoiceModel:
    """The sentence reader ``model``'s choice stage was fitted with (``meta["chooser"]``: the
    shipped one's name), in the runtime whose logits it was fitted on (``runtime``, when the fit
    recorded one that moves the logits: ``onnx-int8``; else the float runtime, numpy's logits);
    ``ConfigError`` when it is not this package's."""
    from ..reader.choice import MODEL_NAME, package_chooser
    from ..reader.runtimes import MOVED_LOGITS

    fitted = model.meta.get("chooser", {})
    runtime = fitted.get("runtime")
    return package_chooser(str(fitted.get("name", MODEL_NAME)), runtime if runtime in MOVED_LOGITS else None)


def reported_model_turn(claim: str) -> bool:
    """Whether a line of ``claim`` is a turn a transcript puts in a model's mouth ("AI: 3.2 supports
    it"). A non-official source that quotes an assistant reports speech; it does not state the
    fact itself, so such a line never becomes that source's claim (it may still be cited as related)."""
    return any(MODEL_TURN.match(line.casefold()) for line in claim.split("\n"))


def _semantic(value: float | None) -> float | None:
    return None if value is None else max(0.0, value)
