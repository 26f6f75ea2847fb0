"""Sentence choice: every sentence of the evidence, scored as an answer to one sub-question.

Each candidate is a sentence of an evidence chunk (questions are never
candidates: they assert nothing). Its features, all in [0, 1] or small
non-negative numbers:

- ``coverage``: IDF-weighted share of the sub-question's terms the sentence
  holds (weights: the tenant's IDF over the chunks the principal may use,
  times the term's role weight — premise and answer-type nouns count less);
- ``coverage_local``: the same with the IDF taken over the evidence's
  sentences instead of the tenant's chunks (a paragraph's subject, repeated in
  every sentence, tells its sentences apart less than a rarer word);
- ``coverage_context``: the same over the sentence, the one before it, the
  chunk's heading path and the document title (the sentence's subject);
- ``coverage_subject``: the same over the sentence, the heading path and the
  title only: what the sentence says of its subject itself, not what the
  sentence before it said (``coverage_context`` alone credited the sentence
  *after* the one that answers);
- ``coverage_chunk``: the same over the whole chunk and its title;
- ``phrases``: share of the question's phrases (Chinese character bigrams,
  other token pairs) found in the sentence and the one before it;
- ``characters``: share of the question's content characters (Chinese) or
  content words found in the sentence; ``wh_context``: share of the words right
  before and after the question word found in it;
- ``dense``: cosine of the question and the sentence (same embedder as the
  index, so an English question meets a Chinese sentence);
- ``type_match``: the sentence holds a value of the expected answer type that
  the question lacks (:mod:`veracity.text.answer_types`);
- ``novelty``: share of the sentence's tokens that are not in the question;
- ``rank``: 1 / rank of the chunk in the evidence; ``rerank``: the chunk's
  rerank score over the best one's; ``first``: first sentence of its chunk;
- ``length``: log of the sentence's token count; ``anaphor``: it opens with a
  pronoun or a connective, so it leans on the sentence before it;
- ``slot_left``, ``slot_right``, ``slot_gap``, ``values``, ``longest``,
  ``opens_with``, ``position``: how the sentence restates the question around
  its question word, the numbers with units the question pins down, the
  longest shared run of characters, whether it opens with the question's
  subject, and where it stands in its chunk (:mod:`veracity.pipeline.slots`).

A claim is the sentence itself, or the sentence with the one before it when it
leans on it (``anaphor``) or is a fragment, or with the one after it when it is
a fragment that opens its chunk, when it only echoes the question
(:data:`ECHO_NOVELTY`) or the question asks for a description, an explanation
or a list ("why", "how", "what are", 为什么,
怎样, 哪些: one sentence often holds only the start of such an answer):
always a contiguous span of the cited chunk. A table row is a candidate with its header row as the
sentence before it (so "which environment variable" meets the header's words);
the header and separator rows are not candidates.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import numpy as np
import numpy.typing as npt

from ..model.contracts import Chunk, ChunkKind, Document, Hit
from ..text.answer_types import answer_type_match
from ..text.background import general_frequency
from ..text.questions import SubQuestion
from ..text.sentences import as_units, code_blocks, split_sentences
from ..text.tokens import coverage_tokens, is_cjk_term, tokenize
from . import slots
from .slots import character_coverage, phrase_coverage, wh_context

FEATURES: Final = (
    "coverage",
    "coverage_local",
    "coverage_context",
    "coverage_subject",
    "coverage_chunk",
    "phrases",
    "characters",
    "wh_context",
    "dense",
    "type_match",
    "novelty",
    "rank",
    "rerank",
    "first",
    "length",
    "anaphor",
    "slot_left",
    "slot_right",
    "slot_gap",
    "values",
    "longest",
    "opens_with",
    "position",
)

_QUESTION_END = re.compile(r"[？?]\s*$")
_ANAPHOR = re.compile(
    r"^(it|its|this|that|these|those|they|their|them|he|his|she|her|such|there|here|however|also|"
    r"thus|therefore|then|so|but|and|which)\b"
    r"|^(他|她|它|其|该|此|这|那|他们|她们|它们|但|而|并|所以|因此|然而|同时|此外|另外|后来|之后)",
    re.IGNORECASE,
)
FRAGMENT_CHARS: Final = 12
"""A sentence shorter than this (characters) is a fragment and brings the one before it."""
ECHO_NOVELTY: Final = 0.5
"""A sentence whose tokens are mostly the question's (novelty below this) only echoes it:
its claim takes the next sentence of the chunk too, which says what the echo announces."""

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]


WORDS_PER_CHUNK: Final = 100
"""Words in a chunk, for the general-language prior of an unseen term: about 400
characters, the chunk budget, of English (≈ 70 words) or Chinese (≈ 250 rjieba tokens)."""


@dataclass(frozen=True, slots=True)
class TermWeights:
    """Chunk frequencies of question terms over the chunks the principal may use, and their IDF."""

    chunks: int
    frequencies: Mapping[str, int]

    def of(self, term: str) -> float:
        """Lucene's IDF, ``log(1 + (N - df + 0.5) / (df + 0.5))``; an uncounted term counts as unseen.

        An unseen term takes the chunk frequency general language would give it
        (:mod:`veracity.text.background`): ``N (1 - exp(-f L))`` for its word
        frequency ``f`` and :data:`WORDS_PER_CHUNK` words a chunk, so an everyday
        word the documents do not use ("turn on", 跑起来) weighs less than a name
        they have never heard of.
        """
        chunks = max(self.chunks, 1)
        df: float = self.frequencies.get(term, 0)
        if df == 0:
            expected = chunks * -math.expm1(-general_frequency(term) * WORDS_PER_CHUNK)
            df = min(expected, chunks - 0.5)
        return math.log1p((chunks - df + 0.5) / (df + 0.5))

    def seen(self, term: str) -> bool:
        """Whether any chunk the principal may use holds ``term``."""
        return self.frequencies.get(term, 0) > 0


@dataclass(frozen=True, slots=True)
class Candidate:
    """One sentence of one evidence chunk, as an answer to one sub-question."""

    hit: Hit
    start: int
    end: int
    claim_start: int
    features: Mapping[str, float]
    context: str = ""
    """The sentence with its subject (title, headings) and the sentence before it."""
    claim_end: int | None = None
    """Where the claim ends when it takes the next sentence too (an echo of the question)."""
    table_header: str = ""
    """For a table row: the table's header row and separator (lines of the same chunk)."""
    subject: str = ""
    """The document's title and the chunk's heading path (and a box's label above the sentence)."""
    previous: str = ""
    """The sentence before it in its chunk (empty for a chunk's first sentence or a table row)."""

    @property
    def claim(self) -> str:
        """The claim text: a contiguous span of the chunk; a table row is preceded by its table's
        header and separator rows, so the claim is a table a reader can read on its own."""
        return f"{self.table_header}\n{self.span}" if self.table_header else self.span

    @property
    def span(self) -> str:
        """The contiguous part of the claim in its chunk (a table row without its header)."""
        return self.hit.chunk.text[self.claim_start : self.claim_end or self.end]


def weighted_coverage(sub: SubQuestion, weights: TermWeights, tokens: frozenset[str], text: str) -> float:
    """Share of the sub-question's weight carried by ``tokens``.

    A Chinese term also counts when it occurs inside ``text`` (segmentation can differ).
    """
    total = covered = 0.0
    for index, term in enumerate(sub.terms):
        weight = weights.of(term) * sub.weight(index)
        total += weight
        if term in tokens or (is_cjk_term(term) and term in text):
            covered += weight
    return covered / total if total else 0.0


@dataclass(frozen=True, slots=True)
class SentenceContext:
    """Everything a sentence's features are computed from (plain values, so they can be stored)."""

    sentence: str
    previous: str
    subject: str
    chunk_text: str
    rank: int
    rerank: float
    dense: float | None
    first: bool
    table_header: str = ""
    """For a table row: the table's header row and separator, which its claim carries."""

    @property
    def around(self) -> str:
        """Subject, the sentence before and the sentence: what a claim leans on."""
        return f"{self.subject} {self.previous} {self.sentence}"


def novelty(sub: SubQuestion, sentence: str) -> float:
    """Share of the sentence's tokens the question does not hold."""
    tokens = frozenset(tokenize(sentence))
    return len(tokens - sub.surface.tokens) / len(tokens) if tokens else 0.0


def echoes(sub: SubQuestion, sentence: str) -> bool:
    """Whether ``sentence`` mostly repeats the question (see :data:`ECHO_NOVELTY`)."""
    return novelty(sub, sentence) < ECHO_NOVELTY


def is_fragment(sentence: str) -> bool:
    """Whether ``sentence`` is too short to stand as a claim alone (:data:`FRAGMENT_CHARS`)."""
    return len(sentence) < FRAGMENT_CHARS


def takes_next_sentence(sub: SubQuestion, context: SentenceContext) -> bool:
    """Whether a claim on ``context.sentence`` runs on into the next sentence of its chunk: the
    sentence only echoes the question, it ends with a colon (it announces what follows:
    "默认浏览器支持范围是：" before the list), it is a fragment with no sentence before it to lean
    on (an FAQ answer's "不能照旧使用。" or "No."), or the question asks for a description, an
    explanation or a list."""
    sentence = context.sentence
    return (
        sentence.rstrip().endswith((":", "："))
        or (context.first and is_fragment(sentence))
        or sub.describes
        or echoes(sub, sentence)
    )


def local_weights(sub: SubQuestion, sentences: Sequence[str]) -> TermWeights:
    """Term statistics over the evidence's sentences: a term every sentence repeats (the
    subject of a paragraph) tells sentences apart less than one a few sentences hold."""
    holders = [
        coverage_tokens(sentence) | {t for t in sub.terms if is_cjk_term(t) and t in sentence}
        for sentence in sentences
    ]
    return TermWeights(
        chunks=len(sentences),
        frequencies={term: sum(term in held for held in holders) for term in sub.terms},
    )


def sentence_features(
    sub: SubQuestion, context: SentenceContext, weights: TermWeights, local: TermWeights | None = None
) -> dict[str, float]:
    """The features of one candidate sentence (see the module docstring).

    ``local`` holds the term statistics over every evidence sentence
    (:func:`local_weights`); without it ``coverage_local`` equals ``coverage``.
    """
    sentence = context.sentence
    asked = sub.surface
    tokens = coverage_tokens(sentence)
    around = context.around
    headed = f"{context.subject} {sentence}"
    whole = f"{context.subject} {context.chunk_text}"
    found = {
        "coverage": weighted_coverage(sub, weights, tokens, sentence),
        "coverage_local": weighted_coverage(sub, local or weights, tokens, sentence),
        "coverage_context": weighted_coverage(sub, weights, coverage_tokens(around), around),
        "coverage_subject": weighted_coverage(sub, weights, coverage_tokens(headed), headed),
        "coverage_chunk": weighted_coverage(sub, weights, coverage_tokens(whole), whole),
        "phrases": phrase_coverage(asked, f"{context.previous} {sentence}"),
        "characters": character_coverage(asked, sentence),
        "wh_context": wh_context(asked, sentence),
        "type_match": answer_type_match(sub.answer_type, sentence, asked.casefolded),
        "novelty": novelty(sub, sentence),
        "rank": 1.0 / context.rank,
        "rerank": context.rerank,
        "first": 1.0 if context.first else 0.0,
        "length": math.log1p(len(tokens)),
        "anaphor": 1.0 if _ANAPHOR.match(sentence) else 0.0,
        **slots.slot_features(asked, sentence),
        "values": slots.value_match(asked, sentence),
        "longest": slots.longest_common(asked, sentence),
        "opens_with": slots.opens_with(sub.terms[0] if sub.terms else "", context.subject, sentence),
        "position": slots.position(sentence, context.chunk_text),
    }
    if context.dense is not None:  # without the dense channel the models read their training mean
        found["dense"] = context.dense
    return found


def candidates(
    sub: SubQuestion,
    hits: Sequence[Hit],
    documents: Mapping[str, Document],
    weights: TermWeights,
    *,
    question_vector: npt.NDArray[np.float32] | None = None,
    embed: Embed | None = None,
) -> list[Candidate]:
    """Every non-question sentence of ``hits`` with its features, in evidence order."""
    contexts = sentence_contexts(hits, documents, question_vector=question_vector, embed=embed)
    local = local_weights(sub, [context.sentence for *_, context in contexts])
    found = []
    for hit, start, end, claim_start, next_end, context in contexts:
        features = sentence_features(sub, context, weights, local)
        echo = next_end is not None and takes_next_sentence(sub, context)
        found.append(
            Candidate(
                hit=hit,
                start=start,
                end=end,
                claim_start=claim_start,
                features=features,
                context=context.around,
                claim_end=next_end if echo else None,
                table_header=context.table_header,
                subject=context.subject,
                previous="" if context.table_header else context.previous,
            )
        )
    return found


@lru_cache(maxsize=32)  # the bodies of one question's evidence; a body may be a whole PDF's text
def _body_code(body: str) -> list[tuple[int, int]]:
    return code_blocks(body)


def code_in(chunk: Chunk, document: Document) -> list[tuple[int, int]]:
    """The fenced code of ``chunk`` in its own offsets, paired over the whole document: a chunk
    may hold a piece of a block cut between lines, whose fences lie outside it."""
    if document.body[chunk.start : chunk.end] != chunk.text:  # a chunk not cut from the body as is
        return [(0, len(chunk.text))] if chunk.kind is ChunkKind.CODE else code_blocks(chunk.text)
    return [
        (max(start, chunk.start) - chunk.start, min(end, chunk.end) - chunk.start)
        for start, end in _body_code(document.body)
        if start < chunk.end and chunk.start < end
    ]


def sentence_contexts(
    hits: Sequence[Hit],
    documents: Mapping[str, Document],
    *,
    question_vector: npt.NDArray[np.float32] | None = None,
    embed: Embed | None = None,
) -> list[tuple[Hit, int, int, int, int | None, SentenceContext]]:
    """``(hit, start, end, claim start, next sentence's end, context)`` of every non-question
    sentence of ``hits`` (the next end is ``None`` for a chunk's last sentence)."""
    best_rerank = max((h.scores.rerank or 0.0 for h in hits), default=0.0)
    spans: list[tuple[Hit, int, int, int, int | None, int, str | None, str]] = []
    for position, hit in enumerate(hits, start=1):
        text = hit.chunk.text
        units = as_units(split_sentences(text), code_in(hit.chunk, documents[hit.chunk.document_id]))
        sentences = [s for s in units if not _QUESTION_END.search(text[s[0] : s[1]])]
        headers = table_headers(text, sentences)
        labels = labels_of(text, sentences)
        for order, (start, end) in enumerate(sentences):
            if headers.get(order) == "" or order in labels:
                continue  # a table's header or separator row, a box's title: they say nothing alone
            after_label = order - 1 in labels
            previous_start = sentences[order - 1][0] if order and not after_label else start
            following = sentences[order + 1] if order + 1 < len(sentences) else None
            runs_on = following is not None and not _sibling_item(text, start, end, following[0])
            next_end = following[1] if following is not None and runs_on else None
            label = next((text[slice(*sentences[o])] for o in sorted(labels, reverse=True) if o < order), "")
            spans.append((hit, start, end, previous_start, next_end, position, headers.get(order), label))
    vectors = _sentence_vectors([h.chunk.text[s:e] for h, s, e, *_ in spans], question_vector, embed)
    found = []
    for index, (hit, start, end, previous_start, next_end, position, header, label) in enumerate(spans):
        chunk = hit.chunk
        document = documents[chunk.document_id]
        sentence = chunk.text[start:end]
        leans = header is None and (bool(_ANAPHOR.match(sentence)) or is_fragment(sentence))
        context = SentenceContext(
            sentence=sentence,
            previous=header.split("\n")[0]
            if header is not None
            else chunk.text[previous_start:start].strip(),
            subject=" ".join((document.title, *chunk.heading_path, *((label,) if label else ()))),
            chunk_text=chunk.text,
            rank=position,
            rerank=(hit.scores.rerank or 0.0) / best_rerank if best_rerank > 0 else 0.0,
            dense=float(vectors[index]) if vectors is not None else None,
            first=start == previous_start,
            table_header=header or "",
        )
        found.append(
            (hit, start, end, previous_start if leans else start, None if header else next_end, context)
        )
    return found


_LIST_ITEM = re.compile(r"([ \t]*)(?:[-*+]|\d{1,3}[.)])[ \t]")


def _item_indent(text: str, start: int) -> int | None:
    """The indentation of the list item whose line holds ``start``, or ``None`` when the line is no item."""
    found = _LIST_ITEM.match(text, text.rfind("\n", 0, start) + 1)
    return None if found is None else len(found.group(1).expandtabs(4))


def _sibling_item(text: str, start: int, end: int, next_start: int) -> bool:
    """Whether the sentence at ``start..end`` is a list item and the next one starts an item of
    the same list level or an outer one: a claim never runs on into it (a list item says its own
    thing), unless the item ends with a colon and announces what follows."""
    here, there = _item_indent(text, start), _item_indent(text, next_start)
    if here is None or there is None or text[start:end].rstrip().endswith((":", "：")):
        return False
    return text.rfind("\n", 0, next_start) >= start and there <= here


LABEL_CHARS: Final = 80
"""A paragraph of one line, shorter than this and without a closing stop, heads what follows it."""
_CLOSING_STOP = re.compile(r"[.!?。！？:：;；…)）\]】]$")


def labels_of(text: str, sentences: Sequence[tuple[int, int]]) -> set[int]:
    """The sentences that are labels, not statements: a paragraph of its own that is one short line
    with no closing stop, with more of the chunk after it (an admonition's or a details box's
    title, a bold pseudo-heading: "Python versions" above "Python 3.9 reached end of life …").
    Such a line is the heading of the sentences after it, never a claim or part of one."""
    found = set()
    for order, (start, end) in enumerate(sentences[:-1]):
        line = text[start:end].strip()
        alone = text[:start].endswith("\n\n") or not text[:start].strip()
        if (
            alone
            and text[end:].startswith("\n\n")
            and "\n" not in line
            and len(line) < LABEL_CHARS
            and not _CLOSING_STOP.search(line)
            and not line.startswith(("|", "-", "*", "+", "`", ">"))
            and not line[:1].isdigit()
        ):
            found.add(order)
    return found


_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


def table_headers(text: str, sentences: Sequence[tuple[int, int]]) -> dict[int, str]:
    """For the sentences that are table rows: a data row's header and separator rows (two lines),
    ``""`` for the header and separator rows themselves (a row is a claim with its header, never
    the header)."""
    found: dict[int, str] = {}
    order = 0
    while order < len(sentences):
        row = text[sentences[order][0] : sentences[order][1]]
        following = order + 1 < len(sentences) and text[sentences[order + 1][0] : sentences[order + 1][1]]
        if row.startswith("|") and following and _TABLE_SEPARATOR.match(following):
            found[order] = found[order + 1] = ""
            data = order + 2
            while data < len(sentences) and text[sentences[data][0] : sentences[data][1]].startswith("|"):
                found[data] = f"{row}\n{following}"
                data += 1
            order = data
        else:
            order += 1
    return found


def _sentence_vectors(
    texts: Sequence[str], question_vector: npt.NDArray[np.float32] | None, embed: Embed | None
) -> npt.NDArray[np.float32] | None:
    """Cosine of each text with the question (vectors are unit length), or ``None`` without a model."""
    if question_vector is None or embed is None or not texts:
        return None
    matrix = embed(texts)
    return np.asarray(matrix @ question_vector, dtype=np.float32)
