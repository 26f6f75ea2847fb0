"""Training windows of the reader: a question and a passage window, with the answer's token span.

The reader is an extractive reading model (SQuAD 2.0 style): it reads ``<s> question </s></s>
passage </s>`` and scores every passage token as the start and the end of the answer; the ``<s>``
token stands for "no answer in this window". A passage is the text an ask shows it: the
document's title and heading path on the first line, then the chunk (:func:`passage_text`), so
the model learns to read headings as context, as it will see them.

From each :class:`ReadingExample`:

- the question over its own context, cut into windows of ``max_length`` tokens that overlap by
  ``stride``: a window that holds a gold answer whole targets its tokens, any other window (and
  every window of an unanswerable question) targets ``<s>``;
- a *hard negative*: the question over another context of the same source that shares the most
  question words and holds no gold answer text, targeting ``<s>`` (what retrieval brings when the
  answer is not in the knowledge base; the Chinese sets have no unanswerable questions of their own).

Everything here is plain Python over the tokenizer; the training loop (:mod:`.train`) batches it.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from ..text.scripts import HAN_RANGES
from .tokenizer import Tokenizer

MAX_LENGTH: Final = 256
"""Tokens per window, question and special tokens included."""
STRIDE: Final = 96
"""Tokens two consecutive windows of one passage share."""
_WORDS: Final = re.compile(f"[a-z0-9]+|[{HAN_RANGES}]")


def passage_text(subject: str, body: str) -> tuple[str, int]:
    """The passage the reader reads (the subject line, then the body) and where the body starts."""
    head = " ".join(subject.split())
    return (f"{head}\n{body}", len(head) + 1) if head else (body, 0)


@dataclass(frozen=True, slots=True)
class Window:
    """One training row: token ids and the answer's first and last token (both 0: no answer)."""

    example_id: str
    language: str
    input_ids: tuple[int, ...]
    passage_start: int
    start: int
    end: int
    kind: str
    """``answer`` (a gold span inside), ``null`` (its own context, no answer inside), ``negative``."""


@dataclass(frozen=True, slots=True)
class ReadingExample:
    """One question on one context; ``answers`` are (text, char_start) with
    ``context[start:start + len(text)] == text``; empty when ``impossible``."""

    example_id: str
    source: str
    language: str
    title: str
    context: str
    question: str
    answers: tuple[tuple[str, int], ...]
    impossible: bool


@dataclass(frozen=True, slots=True)
class PassageWindow:
    """``<s> question </s></s> passage tokens </s>``: where the passage tokens begin in ``input_ids``,
    which passage token comes first (``first``), and the gold span's tokens (0, 0: none)."""

    input_ids: tuple[int, ...]
    passage_start: int
    first: int
    start: int
    end: int


class WindowMaker:
    """Cuts passages into windows for one tokenizer, encoding each passage once."""

    def __init__(self, tokenizer: Tokenizer, max_length: int = MAX_LENGTH, stride: int = STRIDE) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.stride = stride
        self.passage_tokens = lru_cache(maxsize=4096)(tokenizer.encode_with_offsets)

    def windows(
        self, question: str, passage: str, spans: Sequence[tuple[int, int]]
    ) -> Iterator[PassageWindow]:
        """The windows of ``passage`` for ``question``; ``spans`` are gold character spans in
        ``passage`` (a window's ``start``/``end`` are 0 when none lies inside it whole)."""
        tokenizer = self.tokenizer
        question_ids = tokenizer.encode(question, add_special_tokens=False)[: self.max_length // 2]
        ids, offsets = self.passage_tokens(passage)
        room = self.max_length - len(question_ids) - 4
        head = (tokenizer.bos, *question_ids, tokenizer.eos, tokenizer.eos)
        first = 0
        while True:
            last = min(len(ids), first + room)
            start = end = 0
            for begin, finish in spans:
                inside = [k for k in range(first, last) if offsets[k][1] > begin and offsets[k][0] < finish]
                if inside and offsets[inside[0]][0] <= begin and offsets[inside[-1]][1] >= finish:
                    start, end = len(head) + inside[0] - first, len(head) + inside[-1] - first
                    break
            yield PassageWindow((*head, *ids[first:last], tokenizer.eos), len(head), first, start, end)
            if last >= len(ids):
                return
            first = last - min(self.stride, room - 1)


def _words(text: str) -> set[str]:
    return set(_WORDS.findall(text.lower()))


def hard_negatives(examples: Sequence[ReadingExample], seed: int = 0) -> dict[str, str]:
    """Per answerable example id, another context of its source sharing the most question words
    (rare words count more), holding none of its gold answers; ties broken at random (seeded)."""
    by_source: dict[str, list[str]] = defaultdict(list)
    for example in examples:
        if example.context not in by_source[example.source]:
            by_source[example.source].append(example.context)
    rng = random.Random(seed)
    chosen: dict[str, str] = {}
    for source, contexts in sorted(by_source.items()):
        word_sets = [_words(c) for c in contexts]
        frequency: dict[str, int] = defaultdict(int)
        for words in word_sets:
            for word in words:
                frequency[word] += 1
        postings: dict[str, list[int]] = defaultdict(list)
        for index, words in enumerate(word_sets):
            for word in words:
                postings[word].append(index)
        for example in (e for e in examples if e.source == source and not e.impossible):
            scores: dict[int, float] = defaultdict(float)
            # in a fixed order: a set's order changes with each process's string hashes, and with it
            # the float sums and which context each seeded tie-break number goes to
            for word in sorted(_words(example.question)):
                if frequency.get(word, 0) and frequency[word] < 0.2 * len(contexts) + 2:
                    for index in postings[word]:
                        scores[index] += 1.0 / frequency[word]
            golds = [text for text, _ in example.answers]
            ranked = sorted(sorted(scores.items()), key=lambda item: (-item[1], rng.random()))
            for index, _ in ranked:
                other = contexts[index]
                if other != example.context and not any(gold in other for gold in golds):
                    chosen[example.example_id] = other
                    break
    return chosen


def windows(
    examples: Iterable[ReadingExample], maker: WindowMaker, negatives: dict[str, str] | None = None
) -> Iterator[Window]:
    """The training windows of ``examples`` (see the module docstring)."""
    for example in examples:
        passage, offset = passage_text(example.title.replace("_", " "), example.context)
        spans = [(offset + start, offset + start + len(text)) for text, start in example.answers]
        for w in maker.windows(example.question, passage, spans):
            kind = "answer" if w.start else "null"
            yield Window(
                example.example_id, example.language, w.input_ids, w.passage_start, w.start, w.end, kind
            )
        other = (negatives or {}).get(example.example_id)
        if other is not None:
            passage, _ = passage_text(example.title.replace("_", " "), other)
            first = next(maker.windows(example.question, passage, ()))
            yield Window(
                example.example_id, example.language, first.input_ids, first.passage_start, 0, 0, "negative"
            )


@dataclass(frozen=True, slots=True)
class Group:
    """One question's candidate rows (token ids) and which of them answer (none: no answer here)."""

    group_id: str
    language: str
    rows: tuple[tuple[int, ...], ...]
    positives: tuple[int, ...]

    @property
    def tokens(self) -> int:
        return sum(len(r) for r in self.rows)
