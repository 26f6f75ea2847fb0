"""The general-language prior: wordfreq's lists, read directly or through its API, agree."""

from __future__ import annotations

import importlib.util

import pytest
from wordfreq import get_frequency_dict

from veracity.text import background
from veracity.text.background import WORDLIST, general_frequency, wordlist
from veracity.text.tokens import stem_word, stem_words


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_direct_read_is_what_wordfreq_gives(language: str) -> None:
    assert wordlist(language) == get_frequency_dict(language, wordlist=WORDLIST)


def test_without_the_data_file_the_api_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert background._cbpack("en") is None
    assert wordlist("en") == get_frequency_dict("en", wordlist=WORDLIST)


def test_terms_are_looked_up_as_the_question_analysis_cuts_them() -> None:
    assert general_frequency(stem_word("running")) > general_frequency(stem_word("kerberos")) == 0.0
    assert general_frequency("跑") > 0.0 and general_frequency("聯調") == general_frequency("联调")


def test_a_word_list_stems_as_word_by_word() -> None:
    words = ["running", "it", "e5", "proxies", "don", "naïve", "users"]
    assert stem_words(words) == [stem_word(w) for w in words]
