"""The question analysis's word lists hold grammar, never the vocabulary of a corpus.

A list word that is also a word of the demo's titles or facts is allowed only when it is common
in the language at large (the top 2,000 words of ``wordfreq``'s list): a list fitted to the demo
would answer the demo and nothing else.
"""

from __future__ import annotations

import re
from importlib import resources

import pytest
from wordfreq import top_n_list

from veracity.text import function_words, questions
from veracity.text.tokens import tokenize

GENERAL_TOP = 2000


def _list_words() -> set[str]:
    words: set[str] = set()
    for module in (questions, function_words):
        words |= _words_of(module)
    return {w.lower() for w in words}


def _words_of(module: object) -> set[str]:
    words: set[str] = set()
    for name in dir(module):
        value = getattr(module, name)
        if isinstance(value, frozenset | tuple) and value and all(isinstance(w, str) for w in value):
            words |= set(value)
        elif isinstance(value, tuple) and value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            words |= {
                w for _, group in value if isinstance(group, tuple) for w in group if isinstance(w, str)
            }
    return words


def _fixture_words() -> set[str]:
    folder = resources.files("veracity") / "fixtures" / "starship"
    texts: list[str] = []
    for entry in folder.iterdir():
        if entry.name.endswith(".md"):
            text = entry.read_text(encoding="utf-8")
            texts += re.findall(r"^title:\s*(.+)$", text, flags=re.MULTILINE)
            # FAQ headings that are questions hold question words, which are grammar
            texts += [
                h for h in re.findall(r"^#+\s*(.+)$", text, flags=re.MULTILINE) if not h.endswith(("?", "？"))
            ]
            texts += re.findall(r"quote:\s*[\"']?(.+?)[\"']?\s*$", text, flags=re.MULTILINE)
    assert len(texts) > 40, "the fixture's titles, headings and fact quotes were not found"
    return {token for text in texts for token in tokenize(text)}


def test_no_demo_word_sits_in_the_question_lists_unless_it_is_common_language() -> None:
    common = set(top_n_list("zh", GENERAL_TOP)) | set(top_n_list("en", GENERAL_TOP))
    suspicious = sorted((_list_words() & _fixture_words()) - common)
    assert suspicious == []


@pytest.mark.parametrize("word", sorted(questions.CHINESE_CONDITIONS))
def test_chinese_condition_words_are_conjunctions_adverbs_or_time_words(word: str) -> None:
    # 升级 ("upgrade", the demo's running question) once stood here: a verb, not a condition word
    (tag,) = {t for _, t in questions.zh_tags(word)}
    assert tag[0] in "cdpft", (word, tag)
