"""``tokenize`` (the fast path ingest uses) gives exactly the tokens of ``surface_tokens``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from veracity.fixtures import fixture_documents
from veracity.text.tokens import surface_tokens, tokenize, with_identifier_parts


def test_fixture_bodies_tokenize_as_surface_tokens() -> None:
    for document in fixture_documents():
        for drop in (True, False):
            expected = [t for _, t in surface_tokens(document.body, drop_stopwords=drop)]
            assert tokenize(document.body, drop_stopwords=drop) == expected


PIECES = [*"ab Z3.2_-/:'’的了和配置证书日志EÉ\u3000，。!", " the ", " of ", "config.max", "--to"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join), st.booleans())
def test_tokenize_is_the_tokens_of_surface_tokens(text: str, drop: bool) -> None:
    assert tokenize(text, drop_stopwords=drop) == [t for _, t in surface_tokens(text, drop_stopwords=drop)]


def test_identifier_parts_count_for_coverage_but_versions_stay_whole() -> None:
    found = with_identifier_parts(tokenize("preview.port defaults to 4173 since 3.2; set trust_env"))
    assert {"preview.port", "preview", "port", "trust_env", "trust", "env", "3.2"} <= found
    assert "3" not in found and "2" not in found
    assert "preview" not in tokenize("preview.port")  # the index keeps the identifier whole


def test_invisible_characters_pasted_inside_words_do_not_split_them() -> None:
    from veracity.text.questions import analyze_question

    for hidden in ("\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u200f"):
        pasted_words = tokenize(f"v{hidden}-show 和 tem{hidden}plate 侦{hidden}听器")
        assert pasted_words == tokenize("v-show 和 template 侦听器")
    pasted = analyze_question("v\u200b-show 可以用在 template 元素上吗？")
    typed = analyze_question("v-show 可以用在 template 元素上吗？")
    assert pasted.tokens == typed.tokens and pasted.subquestions == typed.subquestions
