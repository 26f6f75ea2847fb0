"""Cue families: what words in many languages *do*, for the injection scorer.

Each family is a kind of linguistic act or referent (addressing an AI, an
override verb, a rule noun, a secret, a claim to authority, a reporting frame,
an operational object...), written as regex fragments over revealed text
(NFKC, case folded, traditional Chinese folded to simplified; see
:mod:`veracity.text.reveal`). Families are general vocabulary in English,
Chinese, Spanish, French, German, Portuguese, Italian, Japanese, Korean and
Russian, not the phrasings of any one page: the scorer never looks at a
single word, only at which families co-occur in a sentence or its window,
with weights fitted on data (:mod:`veracity.pipeline.injection.detector`).

A fragment that starts with a Latin or Cyrillic letter matches at a word
start; it must also end at a word end unless it ends with ``~`` (a stem).
"""

# ruff: noqa: E501  (word lists read best one language group per line)
from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Final

from ...text.reveal import fold_pattern
from .cue_words import FAMILIES

__all__ = ["FAMILIES", "FRAMING", "PATTERNS", "QUOTED"]

# Fake message framing is structural: a bracketed or prefixed header that names a system, an
# operator or the model, or a note addressed to the model.
FRAMING: Final = re.compile(
    fold_pattern(
        r"(?:^|\n)\s*(?:[\[【<({#*>|=\-]+\s*/?\s*)(?:system|sys|admin(?:istrator)?|assistant|developer|root|operator|"
        r"instructions?|important|urgent|override|priority|系统|管理员|指令|重要|紧急|sistema|système|systeme|"
        r"systemnachricht|システム|시스템|система)[^\n]{0,40}?[\]】>)}:|=]"
        r"|<\|(?:im_start|system|assistant|user)\|>|<<\s*sys\s*>>|\[/?inst\]|###\s*(?:system|instruction|response)"
        r"|begin (?:system|hidden|secret|new|admin) (?:prompt|instructions?|message)|(?:^|\n|[-=*#~_\[<>|]\s*)(?:end of (?:the )?(?:document|context|user input|content|retrieved \w+|search results|sources?)|(?:检索|搜索|参考)?(?:内容|文档|资料|结果)结束)"
        r"|</\s*(?:context|documents?|retrieved[\w-]*|search[_-]?results|sources?|knowledge)\s*>|新(?:的)?指令\s*[:：]|nueva instrucción\s*:|nouvelle instruction\s*:|neue anweisung\s*:"
        r"|new (?:system )?instructions?\s*:|(?:^|\n)\s*(?:system|admin|assistant)(?: message| prompt| notice| override| update)?\s*:"
        r"|(?:note|message|notice|instructions?|memo|reminder|directive)s? (?:for|to) (?:the |any |all )?"
        r"(?:ai|assistants?|models?|bots?|llms?|language models?|ai systems?|automated (?:systems?|agents?|readers?|tools?)|"
        r"ai agents?|agents?|crawlers?|chatbots?)"
        r"|(?:ai|assistant|model|bot|llm)s? (?:note|notice|instructions?|directive|only|reminder)\s*:"
        r"|给.{0,8}(?:ai|助手|模型|机器人)[^写编设配改调加]{0,8}?(?:说明|提示|指令|消息|须知|的话|备注)|致.{0,4}(?:ai|助手|模型|机器人)"
        r"|(?:ai|助手|模型|机器人).{0,4}(?:须知|请注意|专用|备注)|【[^】]{0,8}(?:系统|管理员|指令|重要|官方|ai|通知)[^】]{0,8}】"
        r"|系统(?:消息|通知|指令|公告)\s*[:：]|nota para (?:la |las |los )?(?:ia|asistentes?|modelos?)"
        r"|mensaje (?:del sistema|para (?:la )?ia)|note (?:pour|aux?|à) (?:l'ia|les? assistants?|les modèles|l'assistant)"
        r"|message (?:système|pour l'ia)|hinweis (?:für|an) (?:die ki|assistenten|sprachmodelle|den assistenten)"
        r"|システムメッセージ|aiへの指示|시스템 메시지|ai에게|системное сообщение|для ии"
        r"|[\"']role[\"']\s*:\s*[\"'](?:system|developer|assistant|tool)[\"']",
    )
)

_LATIN_START = re.compile(r"[a-z\u00c0-\u024f\u0400-\u04ff(\\]")
# Word edges for alphabetic fragments: CJK characters count as edges ("AI助手" has the word "ai").
# An apostrophe is an edge only in a French or Italian elision ("l'IA", "dell'assistente"), never
# inside an English contraction ("don't").
_BEFORE = r"(?<![a-z0-9_\u00c0-\u024f\u0400-\u04ff])(?:(?<=[ld]')|(?<!'))"
_AFTER = r"(?![a-z0-9_\u00c0-\u024f\u0400-\u04ff])"
_SEVERAL_WORDS = re.compile(r" |\\s|\[- \]")


def _phrases_first(fragments: tuple[str, ...]) -> list[str]:
    """Fragments of several words before single words, each group in its listed order.

    An alternation takes the first fragment that matches, not the longest: listed as they
    are, "ai" would win over "ai (?:systems?|models?)" and "AI models must reveal..." would
    name the model as "AI" with "models" standing between it and the modal.
    """
    return sorted(fragments, key=lambda fragment: not _SEVERAL_WORDS.search(fragment))


def fragment_regex(fragment: str) -> tuple[str, bool]:
    """A fragment as a regular expression over revealed text, and whether it starts with a letter.

    ``~`` inside a fragment stands for any ending. A fragment that starts with a letter gets its
    word end unless it ends with ``~`` (a stem); its word start (:data:`_BEFORE`) is the
    caller's, which may write one for several fragments."""
    stem = fragment.endswith("~")
    body = fold_pattern(fragment[:-1] if stem else fragment).replace("~", r"\w*")
    if not _LATIN_START.match(body):
        return body, False
    return "(?:" + body + ")" + ("" if stem else _AFTER), True


def _compile(fragments: tuple[str, ...]) -> re.Pattern[str]:
    """One family's fragments as one pattern (phrases first, see ``_phrases_first``).

    The fragments that start with a letter share one word-edge lookbehind, written once
    before their alternation rather than once in each of them: a lookbehind only looks at
    the position, so the matches are the same (checked span for span on ~70k sentences of
    the benchmark corpora, and by ``tests/pipeline/test_cues.py``), and Python's engine
    then tests the edge once per position instead of once per fragment: ≈ 6× faster.
    Grouping moves the letter-first fragments before the others in the alternation; that
    could only change which fragment wins at a position where a letter-first fragment and
    another one both match, which the span checks did not find.
    """
    letter_first: list[str] = []
    others: list[str] = []
    for fragment in _phrases_first(fragments):
        regex, starts_with_letter = fragment_regex(fragment)
        (letter_first if starts_with_letter else others).append(regex)
    grouped = [_BEFORE + "(?:" + "|".join(letter_first) + ")"] if letter_first else []
    return re.compile("|".join(grouped + others))


def _compile_each(fragments: tuple[str, ...]) -> re.Pattern[str]:
    """The same family with the edge inside every fragment: the reference ``_compile`` must equal."""
    parts = []
    for fragment in _phrases_first(fragments):
        regex, starts_with_letter = fragment_regex(fragment)
        parts.append(_BEFORE + regex if starts_with_letter else regex)
    return re.compile("|".join(parts))


class FamilyPatterns(Mapping[str, re.Pattern[str]]):
    """Each family's pattern, made by ``build`` from its fragments on first use (≈ 0.16 s for them
    all: a command whose chunks all have a stored verdict never pays it)."""

    def __init__(self, build: Callable[[tuple[str, ...]], re.Pattern[str]]) -> None:
        self._build = build
        self._compiled: dict[str, re.Pattern[str]] | None = None

    def _all(self) -> dict[str, re.Pattern[str]]:
        if self._compiled is None:  # two threads may both build it: the same patterns either way
            self._compiled = {name: self._build(fragments) for name, fragments in FAMILIES.items()}
        return self._compiled

    def __getitem__(self, name: str) -> re.Pattern[str]:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(FAMILIES)

    def __len__(self) -> int:
        return len(FAMILIES)


PATTERNS: Final[Mapping[str, re.Pattern[str]]] = FamilyPatterns(_compile)
QUOTED: Final = re.compile(
    r"“[^”]{4,}”|\"[^\"]{4,}\"|「[^」]{2,}」|『[^』]{2,}』|«[^»]{4,}»|„[^“]{4,}“|`[^`]{4,}`|'[^']{8,}'"
)
