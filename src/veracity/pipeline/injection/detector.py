"""Detect retrieved text that tries to give orders to the engine or the model.

Retrieved text is data, never instructions. The detector is a layered,
explainable scorer:

1. reveal hidden text (:mod:`veracity.text.reveal`);
2. read every sentence with its context and name its features
   (:mod:`veracity.pipeline.injection.signals`);
3. score each window with a logistic model, ``p = sigmoid(bias + sum(weight *
   feature))``, whose weights and thresholds are fitted by
   ``python -m veracity.bench.injection.fit`` on the *tune* half of the
   injection benchmark only and shipped in ``injection.json`` with the digest
   of the data they were fitted on;
4. a text's score is its best window's; the signals reported are that
   window's features that pushed the score up, strongest first.

A chunk scoring at or above ``threshold`` is quarantined when its source is not
``official`` (:func:`must_quarantine`). What happens to the rest of its document
depends on who wrote it (:func:`document_taint`): an ``untrusted`` source has
no accountable author, so a page that gives orders anywhere is the attacker's
page everywhere, and its other chunks (the bait that repeats the question so
the page is retrieved) are held back too; a ``community`` source (a thread, a
wiki) mixes authors, so only the chunks that give orders are held back and the
rest stays usable.

Verdicts are judged once per text, not once per ask: ingest stores the signals
of every chunk of a source that is not official (and the body of an untrusted
one) under :func:`verdict_key`, a digest of the detector's own code and model
(:func:`detector_version`) with the text and its headings; while an engine
answers it reads them through :func:`stored_verdicts`. A change to the
detector changes every key, so an old verdict is never read, only judged
again (and stored by the next ``veracity reindex``). A trained guard in use
(:func:`use_guard`) is judged and stored the same way, under keys made with its
own version (:func:`deciding_version`), so neither decider ever reads the other's
verdicts.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ...model.contracts import Chunk, Document, Trust
from ...model.errors import ConfigError
from .signals import FEATURES, Window, windows

if TYPE_CHECKING:
    from ...guard.model import GuardModel

MODEL_FILE = "injection.json"
SIGNAL_LIMIT = 4
"""Signals a verdict reports: its window's strongest contributing features."""


@dataclass(frozen=True, slots=True)
class DetectorModel:
    """Weights and thresholds of the injection scorer, and what they were fitted on."""

    weights: Mapping[str, float]
    bias: float
    threshold: float
    training: Mapping[str, Any]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DetectorModel:
        """Read the JSON form; ``ConfigError`` names a missing or unknown feature."""
        weights = dict(data.get("weights", {}))
        unknown = sorted(set(weights) - set(FEATURES))
        missing = sorted(set(FEATURES) - set(weights))
        if unknown or missing:
            raise ConfigError(
                f"injection model features differ from the code: unknown {unknown}, missing {missing}; "
                "refit with python -m veracity.bench.injection.fit"
            )
        return cls(
            weights={name: float(weights[name]) for name in FEATURES},
            bias=float(data["bias"]),
            threshold=float(data["threshold"]),
            training=dict(data.get("training", {})),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (weights in feature order)."""
        return {
            "weights": {name: round(self.weights[name], 6) for name in FEATURES},
            "bias": round(self.bias, 6),
            "threshold": round(self.threshold, 6),
            "training": dict(self.training),
        }

    def window_score(self, window: Window) -> float:
        """Probability that ``window`` is an order aimed at the model."""
        z = self.bias + sum(self.weights[name] for name in window.features)
        return 1.0 / (1.0 + math.exp(-z))

    def contributions(self, window: Window) -> list[tuple[str, float]]:
        """The window's features that raise its score, strongest first (ties by name)."""
        raised = [(name, self.weights[name]) for name in window.features if self.weights[name] > 0]
        return sorted(raised, key=lambda item: (-item[1], item[0]))


@dataclass(frozen=True, slots=True)
class Verdict:
    """The detector's reading of one text."""

    score: float
    quarantine: bool
    signals: tuple[str, ...]


@lru_cache(maxsize=1)
def default_model() -> DetectorModel:
    """The shipped model (``injection.json`` beside this module)."""
    text = resources.files(__package__).joinpath(MODEL_FILE).read_text(encoding="utf-8")
    return DetectorModel.from_dict(json.loads(text))


def judge(found: Sequence[Window], model: DetectorModel) -> Verdict:
    """Verdict from scored windows: the best window decides and explains."""
    if not found:
        return Verdict(0.0, False, ())
    best = max(found, key=lambda w: (model.window_score(w), -w.index))
    score = model.window_score(best)
    flagged = score >= model.threshold
    signals = tuple(name for name, _ in model.contributions(best)[:SIGNAL_LIMIT]) if flagged else ()
    return Verdict(score, flagged, signals)


_GUARD: list[GuardModel] = []
"""The trained guard deciding instead of the cue-word detector, when one is in use (:func:`use_guard`)."""


def use_guard(guard: GuardModel | None) -> None:
    """Decide with ``guard`` (a trained classifier, :mod:`veracity.guard.model`) from now on, or with
    the cue-word detector again (``None``)."""
    _GUARD[:] = [guard] if guard is not None else []
    _detect_cached.cache_clear()


def guard_in_use() -> GuardModel | None:
    """The guard that decides, if any."""
    return _GUARD[0] if _GUARD else None


def _guard_verdict(guard: GuardModel, score: float) -> Verdict:
    """What ``guard``'s ``score`` on a text decides: quarantine at its threshold, named by its version."""
    flagged = score >= guard.threshold
    return Verdict(score, flagged, (f"guard:{guard.version}",) if flagged else ())


@lru_cache(maxsize=8192)
def _detect_cached(text: str, heading_path: tuple[str, ...]) -> Verdict:
    if _GUARD:
        return _guard_verdict(_GUARD[0], _GUARD[0].scores([text])[0])
    return judge(windows(text, heading_path), default_model())


def detect(text: str, heading_path: Sequence[str] = (), model: DetectorModel | None = None) -> Verdict:
    """The verdict on ``text`` read under ``heading_path``: the guard's when one is in use
    (:func:`use_guard`), else the shipped cue-word model's (or ``model``'s)."""
    if model is None:
        return _detect_cached(text, tuple(heading_path))
    return judge(windows(text, heading_path), model)


DETECTOR_FILES = (
    ("veracity.pipeline.injection", "detector.py"),
    ("veracity.pipeline.injection", MODEL_FILE),
    ("veracity.pipeline.injection", "signals.py"),
    ("veracity.pipeline.injection", "cues.py"),
    ("veracity.pipeline.injection", "cue_words.py"),
    ("veracity.pipeline.injection", "presence.py"),
    ("veracity.pipeline.injection", "address.py"),
    ("veracity.text", "reveal.py"),
    ("veracity.text", "sentences.py"),
    ("veracity.text", "scripts.py"),
    ("veracity.text", "hant.py"),
)
"""The files whose content decides a verdict: their digest is the detector's version (a test
holds it to every module of ``veracity.text`` and of this package that they import)."""


@lru_cache(maxsize=1)
def detector_version() -> str:
    """A digest of the cue-word detector's code and model (see :data:`DETECTOR_FILES`)."""
    digest = hashlib.sha256()
    for package, name in DETECTOR_FILES:
        digest.update(name.encode())
        digest.update(resources.files(package).joinpath(name).read_bytes())
    return "cues-" + digest.hexdigest()[:16]


def deciding_version() -> str:
    """The version of what decides now: the trained guard's (``guard-<version>``) when one is in
    use, else the cue-word detector's (:func:`detector_version`)."""
    return f"guard-{_GUARD[0].version}" if _GUARD else detector_version()


def verdict_key(text: str, heading_path: Sequence[str] = (), *, version: str | None = None) -> str:
    """What a stored verdict on ``text`` read under ``heading_path`` is filed under, by the decider
    of ``version`` (default: the one deciding now, :func:`deciding_version`)."""
    parts = (version or deciding_version(), "\x1f".join(heading_path), text)
    return hashlib.sha256("\x1e".join(parts).encode("utf-8")).hexdigest()


def verdict_keys(text: str, heading_path: Sequence[str] = ()) -> tuple[str, ...]:
    """Every key a verdict on ``text`` may be stored under in this process: the cue-word
    detector's and, while a guard is in use, the guard's (what a delete removes)."""
    versions = dict.fromkeys((detector_version(), deciding_version()))
    return tuple(verdict_key(text, heading_path, version=version) for version in versions)


@runtime_checkable
class VerdictStore(Protocol):
    """Where the signals judged at ingest are kept (the catalog's store)."""

    def stored_signals(self, key: str) -> tuple[str, ...] | None:
        """The signals filed under ``key``, or ``None`` when none were stored."""
        ...


@dataclass(frozen=True, slots=True)
class _Reader:
    """The store an answer reads verdicts from, the thread that may use it, and what it read."""

    store: VerdictStore
    owner: int
    memo: dict[str, tuple[str, ...]]

    def get(self, key: str) -> tuple[str, ...] | None:
        found = self.memo.get(key)
        # only the answering thread touches the store (a helper thread, such as the service's
        # reranker, would wait for the store's lock that thread holds): helpers read the memo
        if found is None and threading.get_ident() == self.owner:
            found = self.store.stored_signals(key)
            if found is not None:
                self.memo[key] = found
        return found


_READER: ContextVar[_Reader | None] = ContextVar("veracity_verdicts", default=None)


@contextmanager
def stored_verdicts(store: object) -> Iterator[None]:
    """Read verdicts from ``store`` (when it keeps them) inside the block, in this context only."""
    found = _Reader(store, threading.get_ident(), {}) if isinstance(store, VerdictStore) else None
    token = _READER.set(found)
    try:
        yield
    finally:
        _READER.reset(token)


def prefetch_verdicts(texts: Iterable[tuple[str, Sequence[str]]]) -> None:
    """Read the stored verdicts of ``texts`` now, on the answering thread, for helpers to use."""
    reader = _READER.get()
    if reader is None:
        return
    for text, heading_path in texts:
        reader.get(verdict_key(text, heading_path))


def judged_signals(texts: Sequence[tuple[str, Sequence[str]]]) -> list[tuple[str, tuple[str, ...]]]:
    """``(verdict_key, signals)`` of each ``(text, heading_path)``, judged now (what ingest stores);
    a guard in use reads them all in one call (its windows batched)."""
    if _GUARD and texts:
        guard = _GUARD[0]
        scores = guard.scores([text for text, _ in texts])
        return [
            (verdict_key(text, heading), _guard_verdict(guard, score).signals)
            for (text, heading), score in zip(texts, scores, strict=True)
        ]
    return [(verdict_key(text, heading), detect(text, heading).signals) for text, heading in texts]


def instruction_signals(text: str, heading_path: Sequence[str] = ()) -> tuple[str, ...]:
    """Names of the signals that make ``text`` an order to the model; empty when it is not one.

    The stored verdict of the decider in use when one is at hand (:func:`stored_verdicts`); else
    judged now.
    """
    reader = _READER.get()
    if reader is not None:
        stored = reader.get(verdict_key(text, heading_path))
        if stored is not None:
            return stored
    return detect(text, heading_path).signals


def must_quarantine(text: str, trust: Trust, heading_path: Sequence[str] = ()) -> tuple[str, ...]:
    """Signals that put a chunk in quarantine; empty for official sources or clean text."""
    if trust is Trust.OFFICIAL:
        return ()
    return instruction_signals(text, heading_path)


def document_taint(body: str, trust: Trust) -> tuple[str, ...]:
    """Signals that hold back *every* chunk of a document: an ``untrusted`` source whose text
    gives orders anywhere (see the module docstring); empty otherwise."""
    if trust is not Trust.UNTRUSTED:
        return ()
    return instruction_signals(body)


def hold_back(chunk: Chunk, document: Document) -> tuple[str, ...]:
    """Why ``chunk`` of ``document`` stays out of the answer context; empty when it may enter.

    Its own signals when it gives orders; ``untrusted_page_gives_orders`` and the
    page's signals when it is another chunk of an untrusted page that does.
    """
    own = must_quarantine(chunk.text, document.trust, chunk.heading_path)
    if own:
        return own
    taint = document_taint(document.body, document.trust)
    return ("untrusted_page_gives_orders", *taint) if taint else ()
