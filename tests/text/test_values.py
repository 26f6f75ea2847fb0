"""Checkable values of a sentence: numbers, codes, names, negation."""

from __future__ import annotations

from veracity.text.values import codes, names, negates, numbers, zh_numeral


def test_numbers_are_normalized_across_forms() -> None:
    assert numbers("最多 1,000 个成员，保留三十天") == {"1000", "30"}
    assert numbers("valid from 2026-07-01") == {"2026", "7", "1"}
    assert numbers("since version 3.10, twelve seats") == {"3.10", "12"}
    assert zh_numeral("两百零五") == 205 and zh_numeral("十二") == 12 and zh_numeral("计划") is None


def test_codes_and_names_are_folded() -> None:
    assert codes("run `starship sso status` with --dry-run and STARSHIP_HOME") == {
        "starship sso status",
        "--dry-run",
        "starship_home",
    }
    assert {"saml", "enterprise"} <= names("Team plans need SAML and the Enterprise plan")


def test_negation_words_of_both_languages() -> None:
    assert negates("3.2 的 Team 计划不能再使用旧版 SAML")
    assert negates("Team plans can't use SAML") and negates("It is not supported.")
    assert not negates("不同的计划，未来的版本")
    assert not negates("Team plans can use SAML")
