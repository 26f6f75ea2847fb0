"""Question analysis: sub-questions, the terms each asks about, and the answer it expects.

A question such as "We use 2.8 with SAML. After upgrading to 3.2, can we keep
SAML? Will extra members be deleted?" holds context sentences and several
sub-questions; each sub-question is answered (or not) on its own.

For each sub-question, per language (Chinese, English; other languages fall
back to the tokenizer alone):

- *content terms*: tokens without question words, auxiliaries, pronouns and
  other closed-class words (the lists below are grammar, not vocabulary of any
  corpus), English stemmed like the index;
- a *role* per term that says how much evidence must say it: ``asked`` (1.0),
  ``premise`` (the part after "if/when/after…" or before a comma that sets the
  scene, 0.5), ``asker`` (a noun owned by the asker: "our company", 我们公司, 0.3),
  ``answer_type`` (the noun that names the kind of answer: "which *country*",
  哪个*国家*, 0.3 — the evidence says "France", not "country"); ``predicate``
  (a verb or adverb asked about in a Chinese yes/no question, 0.3: the
  evidence may answer "no" with another verb — 删除吗 → 全部保留);
- the *expected answer type*, from the question word: person, time, number,
  place, procedure, reason, yes/no, entity.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import Final

from ..model.errors import ValidationError
from .function_words import (
    CHINESE_CONDITION_ENDS,
    CHINESE_CONDITIONS,
    CHINESE_FUNCTION_PREFIXES,
    CHINESE_FUNCTION_WORDS,
    CHINESE_POSSESSIVES,
    ENGLISH_AUXILIARIES,
    ENGLISH_CONDITIONS,
    ENGLISH_FUNCTION_WORDS,
    ENGLISH_POSSESSIVES,
)
from .language import detect_language
from .question_surface import QuestionSurface, read_surface
from .scripts import drop_invisible, is_han
from .sentences import sentence_texts
from .tokens import STOPWORDS, segmenter, surface_tokens, tokenize


class AnswerType(StrEnum):
    """What kind of answer a question asks for."""

    PERSON = "person"
    TIME = "time"
    NUMBER = "number"
    PLACE = "place"
    PROCEDURE = "procedure"
    REASON = "reason"
    YES_NO = "yes_no"
    ENTITY = "entity"


class TermRole(StrEnum):
    """Why a term is in a sub-question; see :data:`ROLE_WEIGHT`."""

    ASKED = "asked"
    PREMISE = "premise"
    ASKER = "asker"
    ANSWER_TYPE = "answer_type"
    PREDICATE = "predicate"


ROLE_WEIGHT: Final = {
    TermRole.ASKED: 1.0,
    TermRole.PREMISE: 0.5,
    TermRole.ASKER: 0.3,
    TermRole.ANSWER_TYPE: 0.3,
    TermRole.PREDICATE: 0.3,
}
"""How much of a term the evidence must carry, by role (multiplies the term's IDF)."""

_ANSWER_TYPE_ZH: Final = (
    (AnswerType.PERSON, ("谁", "哪位", "什么人", "何人")),
    (
        AnswerType.TIME,
        (
            "什么时候",
            "何时",
            "哪年",
            "哪一年",
            "几月",
            "几号",
            "哪天",
            "哪一天",
            "多久",
            "什么时间",
            "年份",
            "哪个朝代",
            "哪个世纪",
        ),
    ),
    (AnswerType.NUMBER, ("多少", "几个", "几", "多大", "多高", "多长", "多远", "多重", "百分之几", "第几")),
    (
        AnswerType.PLACE,
        ("哪里", "哪儿", "什么地方", "在哪", "何处", "何地", "哪个国家", "哪座城市", "哪个城市", "哪个地区"),
    ),
    (AnswerType.REASON, ("为什么", "为何", "什么原因", "原因是", "为啥", "怎么回事", "咋回事")),
    (AnswerType.PROCEDURE, ("怎么", "如何", "怎样", "怎么办", "咋", "咋办")),
    (
        AnswerType.YES_NO,
        ("吗", "是否", "是不是", "能否", "可否", "有没有", "能不能", "会不会", "可不可以", "要不要"),
    ),
)
_ANSWER_TYPE_EN: Final = (
    (AnswerType.PERSON, re.compile(r"\b(who|whom|whose)\b")),
    (
        AnswerType.TIME,
        re.compile(
            r"\bwhen\b|\b(what|which) (year|date|day|month|time|century|decade|period|era)\b"
        ),
    ),
    (
        AnswerType.NUMBER,
        re.compile(
            r"\bhow (many|much|large|big|old|far|high|long|tall|fast|often)\b"
            r"|\bwhat (number|percentage|percent|amount|size)\b"
        ),
    ),
    (
        AnswerType.PLACE,
        re.compile(
            r"\bwhere\b|\b(what|which) (country|city|place|region|state|location|continent|town|area)\b"
        ),
    ),
    (AnswerType.REASON, re.compile(r"\bwhy\b|\bwhat (caused|causes|is the reason)\b")),
    (AnswerType.PROCEDURE, re.compile(r"\bhow (do|does|can|could|should|would|to)\b")),
)
# Nouns that name the kind of answer right after a wh-word ("which country", 哪个国家).
# After "how", the adjective is that noun ("how long", "how far": a length, a distance), not a
# word the evidence must repeat: the answer says "35 days", not "long".
_EN_TYPE_NOUN = re.compile(
    r"\b(?:what|which|whose|how many|how much)\s+(?:kind of\s+|type of\s+|sort of\s+)?"
    r"|\bhow\s+(?=(?:long|far|old|often|large|big|high|tall|fast|wide|deep|heavy|late|early|soon)\b)"
)
_ZH_TYPE_NOUN = re.compile(
    r"(?:什么|哪[一两二三四五六七八九十几]?[个位种家座本部条名只项门类所]?|何种|多少|几[个种位名条项]?|第几)"
)

_MARKS: Final = "？?。！!；;"
_QUESTION_MARK = re.compile(r"[？?]|吗\s*$|呢\s*$|么\s*$")
_PREMISE_SPLIT = re.compile(r"[,，、:：]")


@dataclass(frozen=True, slots=True)
class SubQuestion:
    """One question to be answered: its terms with their roles and the answer it expects."""

    text: str
    terms: tuple[str, ...]
    roles: tuple[TermRole, ...] = ()
    answer_type: AnswerType = AnswerType.ENTITY
    language: str = "und"
    surface: QuestionSurface = field(init=False, repr=False, compare=False)
    """What the sentence features compare each sentence with, read once here."""
    describes: bool = field(init=False, repr=False, compare=False)
    """Whether it asks for a description, an explanation or a list (:func:`asks_for_description`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "surface", read_surface(self.text))
        object.__setattr__(self, "describes", asks_for_description(self.text, self.language))

    def weight(self, index: int) -> float:
        """The role weight of term ``index`` (1.0 when no roles are given)."""
        return ROLE_WEIGHT[self.roles[index]] if self.roles else 1.0


# Questions whose answer is a description, an explanation or a list rather than one value: "为什么",
# "怎样", "有哪些", "什么是 X", "why", "how do I", "describe", "what are". Their answer often runs
# over two sentences of the source.
_OPEN_ZH: Final = re.compile(
    r"哪些|什么样|怎样|怎么样|如何|为什么|为何|什么原因|^什么是|有什么(?:特点|特征|作用|影响|意义|区别|不同|用途|功能)"
    r"|为啥|[怎咋]么?回事|干嘛|干啥|干什么用|做什么的|有[什啥]么?用"
)
_OPEN_EN: Final = re.compile(
    r"\bwhy\b|\bhow (?:do|does|did|can|could|should|would|to|is|are|was|were)\b|^(?:describe|explain)\b"
    r"|\bwhat (?:are|were)\b|\bwhat (?:is|was) (?:a|an)\b|\bin what ways?\b"
)


def asks_for_description(text: str, language: str) -> bool:
    """Whether the question asks for a description, an explanation or a list (see ``_OPEN_ZH``)."""
    return bool((_OPEN_ZH if language == "zh" else _OPEN_EN).search(text.strip().lower()))


def answer_type(text: str, language: str) -> AnswerType:
    """The expected answer type of a question sentence in ``language``."""
    if language == "zh":
        for kind, markers in _ANSWER_TYPE_ZH:
            if any(marker in text for marker in markers):
                return kind
        return AnswerType.ENTITY
    lowered = text.lower()
    for kind, pattern in _ANSWER_TYPE_EN:
        if pattern.search(lowered):
            return kind
    first = lowered.split(maxsplit=1)[0] if lowered.split() else ""
    if first in ENGLISH_AUXILIARIES:
        return AnswerType.YES_NO
    return AnswerType.ENTITY


def _type_nouns(text: str, language: str) -> set[str]:
    """The first content token after each wh-word: the noun naming the kind of answer."""
    pattern = _ZH_TYPE_NOUN if language == "zh" else _EN_TYPE_NOUN
    source = text if language == "zh" else text.lower()
    found: set[str] = set()
    for match in pattern.finditer(source):
        following = next(surface_tokens(source[match.end() :]), None)
        if following is not None:
            found.add(following[1])
    return found


def _premise_end(text: str, language: str) -> int:
    """Where the premise (a leading conditional clause) ends in ``text``; 0 when there is none."""
    pieces = list(_PREMISE_SPLIT.finditer(text))
    if not pieces:
        return 0
    head = text[: pieces[0].start()].strip().lower()
    words = head.split()
    if language == "zh":
        starts = any(
            head.startswith(marker) or marker in head[:4] for marker in CHINESE_CONDITIONS
        ) or head.endswith(CHINESE_CONDITION_ENDS)
    else:
        starts = bool(words) and words[0] in ENGLISH_CONDITIONS
    return pieces[0].end() if starts else 0


PREDICATE_TAGS: Final = ("v", "d", "m", "f", "t")
"""rjieba tags of what a yes/no question asserts: verbs, adverbs, numerals, time and place-of-time
words (会在 30 天后被自动删除) — the evidence may deny it in other words."""


def _predicates(text: str, language: str, kind: AnswerType) -> frozenset[str]:
    """Verbs, adverbs, numerals and time words of a Chinese yes/no question; none otherwise."""
    if language != "zh" or kind is not AnswerType.YES_NO:
        return frozenset()
    return frozenset(word for word, tag in zh_tags(text) if tag.startswith(PREDICATE_TAGS))


@lru_cache(maxsize=65536)
def zh_tags(text: str) -> tuple[tuple[str, str], ...]:
    """rjieba's words and part-of-speech tags of ``text`` (cached: questions and evidence sentences
    are tagged again and again)."""
    return tuple(segmenter().tag(text))


GLUED_TAILS: Final = "是在被把与于"
"""Function characters rjieba glues to an unknown name before them ("刘七是怎么死的" → 刘七是,
"黄华麒是哪个大学毕业的" → 黄华麒是), tagging the whole as a noun: the name alone is the term."""


def _unglued(surface: str, token: str, tags: Mapping[str, str]) -> tuple[str, str]:
    """``surface`` and ``token`` without a function character glued to a name (see ``GLUED_TAILS``)."""
    if len(token) >= 3 and token[-1] in GLUED_TAILS and tags.get(surface, "").startswith("n"):
        return surface[:-1], token[:-1]
    return surface, token


def _terms(
    text: str, language: str, kind: AnswerType = AnswerType.ENTITY
) -> tuple[tuple[str, ...], tuple[TermRole, ...]]:
    function_words = CHINESE_FUNCTION_WORDS | ENGLISH_FUNCTION_WORDS
    possessives = CHINESE_POSSESSIVES | ENGLISH_POSSESSIVES
    type_nouns = _type_nouns(text, language)
    premise_end = _premise_end(text, language)
    predicates = _predicates(text, language, kind)
    tags = dict(zh_tags(text)) if language == "zh" else {}
    roles: dict[str, TermRole] = {}
    after_possessive = False
    position = 0
    for glued, whole in surface_tokens(text, drop_stopwords=False):
        surface, token = _unglued(glued, whole, tags)
        position = text.lower().find(surface, position) if surface else position
        owned = after_possessive
        after_possessive = surface in possessives
        if _is_function_word(surface, function_words):
            continue
        if token in type_nouns:
            role = TermRole.ANSWER_TYPE
        elif owned:
            role = TermRole.ASKER
        elif 0 <= position < premise_end:
            role = TermRole.PREMISE
        elif surface in predicates:
            role = TermRole.PREDICATE
        else:
            role = TermRole.ASKED
        current = roles.get(token)
        if current is None or ROLE_WEIGHT[role] > ROLE_WEIGHT[current]:
            roles[token] = role
    return tuple(roles), tuple(roles.values())


def _single_ideograph(token: str) -> bool:
    return len(token) == 1 and is_han(token)


def _is_function_word(surface: str, function_words: frozenset[str]) -> bool:
    if surface in function_words or surface in STOPWORDS or _single_ideograph(surface):
        return True
    return (
        len(surface) <= 3 and surface.startswith(CHINESE_FUNCTION_PREFIXES) and _single_ideograph(surface[0])
    )


def analyze(sentence: str, language: str | None = None) -> SubQuestion | None:
    """One sub-question from one question sentence; ``None`` when it asks about nothing."""
    language = language or detect_language(sentence)
    kind = answer_type(sentence, language)
    terms, roles = _terms(sentence, language, kind)
    if not terms:
        return None
    return SubQuestion(text=sentence, terms=terms, roles=roles, answer_type=kind, language=language)


MAX_QUESTION_CHARS: Final = 2_000
"""The longest question (or search query) taken, in characters: every sub-question is retrieved
and read on its own, so a pasted page would hold an ask for minutes (a 51 KB one took 131 s)."""
MAX_SUBQUESTIONS: Final = 8
"""The most distinct questions one ask may hold; more are refused with a request to ask fewer at a
time (each is answered apart, so the cost grows with their number)."""


def check_question(text: str, field: str = "question") -> None:
    """``ValidationError`` for a question no ask takes: empty, longer than
    :data:`MAX_QUESTION_CHARS`, or holding more than :data:`MAX_SUBQUESTIONS` distinct questions."""
    if not text or not text.strip():
        raise ValidationError(f"the {field} is empty; ask something", field=field)
    if len(text) > MAX_QUESTION_CHARS:
        raise ValidationError(
            f"the {field} has {len(text):,} characters; at most {MAX_QUESTION_CHARS:,} are taken "
            "(ask about one thing at a time)",
            field=field,
        )
    asked = _asked_sentences(text)
    if len(asked) > MAX_SUBQUESTIONS:
        raise ValidationError(
            f"the {field} holds {len(asked)} questions; ask at most {MAX_SUBQUESTIONS} at a time",
            field=field,
        )


def _asked_sentences(question: str) -> list[str]:
    """The question sentences of ``question``, each once (a repeated one is asked once)."""
    # a piece of sentence marks alone ("？？" splits into "？" and "？") asks nothing
    sentences = [s for s in sentence_texts(question, clauses=True) if s.strip(_MARKS)]
    return list(dict.fromkeys(s for s in sentences if _QUESTION_MARK.search(s)))


def split_subquestions(question: str, language: str | None = None) -> tuple[SubQuestion, ...]:
    """Sub-questions of ``question`` (in ``language``, detected when not given); statements are
    context, not sub-questions.

    A text with no question sentence is one sub-question as a whole.
    """
    language = language or detect_language(question)
    asked = _asked_sentences(question)
    if not asked:
        asked = [question.strip()]
    analysed = (analyze(sentence, language) for sentence in asked)
    return tuple(sub for sub in analysed if sub is not None)


@dataclass(frozen=True, slots=True)
class AnalyzedQuestion:
    """A question read once per ask: every stage of the pipeline takes this and none reads the
    question's text again (a test holds them to it).

    ``tokens`` are the index's tokens of the whole text (lexical recall); ``words`` its
    ``(surface, token)`` pairs, stop words kept out (the retry's rewrites).
    """

    text: str
    language: str
    subquestions: tuple[SubQuestion, ...]
    tokens: tuple[str, ...]
    words: tuple[tuple[str, str], ...]

    @property
    def terms(self) -> tuple[str, ...]:
        """Every sub-question's terms, sorted, each once (the term statistics asked of the index)."""
        return tuple(sorted({t for sub in self.subquestions for t in sub.terms}))

    @property
    def answer_types(self) -> tuple[AnswerType, ...]:
        """The answer type each sub-question expects, in order."""
        return tuple(sub.answer_type for sub in self.subquestions)

    @property
    def premise_terms(self) -> tuple[str, ...]:
        """The terms that set the scene rather than ask ("after upgrading to 3.2, …")."""
        return tuple(
            dict.fromkeys(
                term
                for sub in self.subquestions
                for term, role in zip(sub.terms, sub.roles, strict=False)
                if role is TermRole.PREMISE
            )
        )


def analyze_question(text: str) -> AnalyzedQuestion:
    """``text`` read once: its language, sub-questions, index tokens and words."""
    language = detect_language(text)
    return AnalyzedQuestion(
        text=text,
        language=language,
        subquestions=split_subquestions(drop_invisible(text), language),
        tokens=tuple(tokenize(text)),
        words=tuple(surface_tokens(text)),
    )
