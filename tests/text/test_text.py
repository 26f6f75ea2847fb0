"""Normalization and the zh/en tokenizer."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import rjieba

from veracity.text.normalize import identity_text, normalize_body
from veracity.text.sentences import as_units, code_blocks, split_sentences
from veracity.text.tokens import tokenize


@pytest.mark.parametrize("token", ["3.2", "e1042", "config.max_retries", "--to", "v2.8.1", "sso-team-32"])
def test_identifiers_numbers_and_versions_stay_whole(token: str) -> None:
    text = f"请运行 {token.upper() if token == 'e1042' else token} 然后检查"
    assert token in tokenize(text)


def test_latin_is_lowercased_and_chinese_is_segmented_like_jieba() -> None:
    tokens = tokenize("升级到 3.2 后 Team 计划不能使用 SAML 单点登录")
    assert "team" in tokens and "saml" in tokens and "3.2" in tokens
    expected = [t for t in rjieba.cut("单点登录") if t.strip()]
    assert all(piece in tokens for piece in expected)


def test_the_segmenter_is_loaded_only_when_chinese_text_is_met() -> None:
    """An English question or ingest never pays for loading rjieba's dictionary (≈ 0.12 s)."""
    program = (
        "import sys\n"
        "from veracity.text.questions import analyze_question\n"
        "from veracity.text.tokens import tokenize\n"
        "tokenize('How long are daily snapshots kept?'); analyze_question('Is SSO on in 3.2?')\n"
        "print('rjieba' in sys.modules)\n"
        "tokenize('每日快照保留多少天')\n"
        "print('rjieba' in sys.modules)\n"
    )
    found = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert found.stdout.split() == ["False", "True"]


def test_cli_command_tokens() -> None:
    # options stay whole; plain English words are stemmed on both the index and the question side
    assert tokenize("starship migrate sso --to oidc") == [
        "starship",
        "migrat",
        "sso",
        "--to",
        "oidc",
    ]


def test_english_words_are_stemmed_identifiers_are_not() -> None:
    assert tokenize("settings setting") == ["set", "set"]
    assert tokenize("config.max_retries E1042 v2.8.1 café Normandy's") == [
        "config.max_retries",
        "e1042",
        "v2.8.1",
        "café",
        "normandi",
    ]


def test_stopwords_dropped_only_when_asked() -> None:
    assert "的" not in tokenize("我的计划")
    assert "的" in tokenize("我的计划", drop_stopwords=False)


def test_normalize_keeps_lines_and_collapses_blank_runs() -> None:
    assert normalize_body("a  \r\nb\n\n\n\nc\t\n") == "a\nb\n\nc"


def test_identity_text_collapses_all_whitespace() -> None:
    assert identity_text(" a \n\n b\tc ") == "a b c"


def test_identity_text_counts_as_whitespace_what_a_pattern_s_backslash_s_does() -> None:
    whitespace = [chr(code) for code in range(0x3001) if re.fullmatch(r"\s", chr(code))]
    assert "\u3000" in whitespace and "\x1c" in whitespace and "\u200b" not in whitespace
    text = "x".join(whitespace) + "\u200b" + "".join(whitespace)
    assert identity_text(text) == re.sub(r"\s+", " ", text).strip()


def test_sentences_cover_text_without_outer_spaces() -> None:
    text = "第一句。第二句！ Third one. Fourth\n- 第五\n- sixth"
    assert [text[a:b] for a, b in split_sentences(text)] == [
        "第一句。",
        "第二句！",
        "Third one.",
        "Fourth",
        "- 第五",
        "- sixth",
    ]


def test_a_paragraph_wrapped_over_lines_is_not_cut_at_its_line_breaks() -> None:
    text = "Deleting a policy keeps the snapshots. Remove\nthem with prune first.\n\n| a | b |\n| 1 | 2 |"
    assert [text[a:b] for a, b in split_sentences(text)] == [
        "Deleting a policy keeps the snapshots.",
        "Remove\nthem with prune first.",
        "| a | b |",
        "| 1 | 2 |",
    ]


def test_a_numbered_list_marker_opens_its_item_and_ends_no_sentence() -> None:
    text = "1. 请先升级到 v5。\n2. 确认项目可以运行。\n  10. Run it. Then check.\nIt ended in 2020. Then"
    assert [text[a:b] for a, b in split_sentences(text)] == [
        "1. 请先升级到 v5。",
        "2. 确认项目可以运行。",
        "10. Run it.",
        "Then check.",
        "It ended in 2020.",
        "Then",
    ]


def test_a_fenced_code_block_is_one_unit_with_its_fences() -> None:
    text = "Install it first:\n\n```shell\n$ pip install x\n$ x --check\n```\n\nThen run it. Done."
    units = [text[a:b] for a, b in as_units(split_sentences(text), code_blocks(text))]
    block = "```shell\n$ pip install x\n$ x --check\n```"
    assert units == ["Install it first:", block, "Then run it.", "Done."]
    unclosed = "Run:\n```\nx --all\nx --none"
    assert [unclosed[a:b] for a, b in code_blocks(unclosed)] == ["```\nx --all\nx --none"]
    nested = "~~~\n```\n~~~\nafter"  # a fence closes only a block opened with its own character
    assert [nested[a:b] for a, b in code_blocks(nested)] == ["~~~\n```\n~~~"]
