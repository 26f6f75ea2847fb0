"""``tokenize`` (the fast path ingest uses) gives exactly the tokens of ``surface_tokens``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from veracity.fixtures import fixture_documents
from veracity.text.tokens import surface_tokens, tokenize


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
