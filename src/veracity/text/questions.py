"""Question analysis: sub-questions and the terms each one asks about.

A question such as the running question holds context sentences (``我们正在使用
2.8 的 Team 计划……。``) and several sub-questions (``……还能继续使用 SAML 吗？``).
Each sub-question must be covered by evidence on its own. Its *focus nouns*
(nouns and latin names, found with rjieba's part-of-speech tags) are what it
asks about: if evidence never mentions one, the evidence does not hold what was
asked, however many other words match.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import rjieba

from .tokens import STOPWORDS, tokenize

_QUESTION_END = re.compile(r"[^？?。！!；;\n]+[？?。！!；;]?")
_QUESTION_MARK = re.compile(r"[？?]|吗$|呢$|么$")
_NOUN_TAGS = ("n", "eng")

# Words a person uses to talk about their own situation, not the topic asked
# about: they are never focus terms and never required of evidence.
ASKER_WORDS = frozenset(
    "我们 你们 我 你 他们 大家 公司 单位 团队 情况 问题 事情 东西 时候 办法 怎么回事 怎么 什么 "
    "为什么 如何 如果 假如 以后 之后 后来 现在 目前 还能 能否 可以 是否 需要 多出来 出来".split()
)


@dataclass(frozen=True, slots=True)
class SubQuestion:
    """One question to be answered, with the terms evidence must cover."""

    text: str
    terms: tuple[str, ...]
    focus_nouns: tuple[str, ...]


def _content_terms(text: str) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for token in tokenize(text):
        if token in ASKER_WORDS or token in STOPWORDS:
            continue
        if _is_single_cjk(token):
            continue
        seen.setdefault(token, None)
    return tuple(seen)


def _is_single_cjk(token: str) -> bool:
    return len(token) == 1 and unicodedata.category(token) == "Lo"


def focus_nouns(text: str) -> tuple[str, ...]:
    """Nouns and latin names in ``text``, lowercased, in order, without asker words."""
    nouns: dict[str, None] = {}
    for word, tag in rjieba.tag(unicodedata.normalize("NFKC", text)):
        word = word.strip().lower()
        if not word or word in ASKER_WORDS or word in STOPWORDS or _is_single_cjk(word):
            continue
        if tag.startswith(_NOUN_TAGS) and not tag.startswith("nx"):
            nouns.setdefault(word, None)
    return tuple(nouns)


def split_subquestions(question: str) -> tuple[SubQuestion, ...]:
    """Sub-questions of ``question``; statements are context, not sub-questions.

    A text with no question sentence is one sub-question as a whole.
    """
    sentences = [m.group(0).strip() for m in _QUESTION_END.finditer(question) if m.group(0).strip()]
    asked = [s for s in sentences if _QUESTION_MARK.search(s)]
    if not asked:
        asked = [question.strip()]
    result = []
    for sentence in asked:
        terms = _content_terms(sentence)
        if not terms:
            continue
        result.append(SubQuestion(text=sentence, terms=terms, focus_nouns=focus_nouns(sentence)))
    return tuple(result)
