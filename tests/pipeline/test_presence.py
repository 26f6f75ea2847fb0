"""A cue family's presence pattern finds a match in exactly the texts its pattern does.

``presence.PRESENCE`` adds a first-letter lookahead to the fragments it can prove start with a
letter, and the detector asks it only whether a family occurs (``signals._families``). It must
say yes exactly where ``cues.PATTERNS`` finds a match, on the demo fixture, the injection
benchmark's tune corpus, and strings built from the cue fragments with random neighbours
(Chinese ones among them: the case the lookahead is for).
"""

from __future__ import annotations

import re._parser as sre_parse

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.pipeline.test_cues import FRAGMENTS, revealed_sentences
from veracity.bench.injection.corpus import generate, labeled_chunks, select
from veracity.catalog.demo import demo_catalog
from veracity.pipeline.injection import cues, presence
from veracity.pipeline.injection.presence import PRESENCE, first_characters


def assert_same_presence(text: str) -> None:
    for name, pattern in cues.PATTERNS.items():
        assert bool(PRESENCE[name].search(text)) == bool(pattern.search(text)), (name, text[:120])


def test_same_presence_on_the_fixture_and_the_tune_corpus() -> None:
    catalog = demo_catalog()
    texts = [c.text for d in catalog.documents() for c in catalog.chunks(d.document_id)]
    texts += [labeled.chunk.text for sample in select(generate(seed=0, variants=2), split="tune")
              for labeled in labeled_chunks(sample)]  # fmt: skip
    checked = found = 0
    for text in texts:
        for sentence in revealed_sentences(text):
            assert_same_presence(sentence)
            checked += 1
            found += any(pattern.search(sentence) for pattern in cues.PATTERNS.values())
    assert checked > 1000 and found > 500


FILLER = st.sampled_from([" ", "", "x", "的", "请", "，", "-", "AI", "2", "。", "'", "(", "é", "ж", "\n"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), FILLER), min_size=1, max_size=12))
def test_same_presence_on_strings_made_of_cue_fragments(parts: list[str]) -> None:
    assert_same_presence("".join(parts).casefold())


def test_the_first_characters_of_nearly_every_fragment_are_read() -> None:
    # the speed comes from here: a fragment whose first characters are not read goes into a
    # group without a lookahead, tried at every position as before
    regexes = [cues.fragment_regex(f)[0] for fs in cues.FAMILIES.values() for f in fs]
    read = [presence._first_of(regex) is not None for regex in regexes]
    assert sum(read) >= 0.95 * len(regexes)


def first(pattern: str) -> list[tuple[int, int]] | None:
    return first_characters(sre_parse.parse(pattern).data)


def test_first_characters_are_read_only_where_plain() -> None:
    assert first("ignore") == [(ord("i"), ord("i"))]
    assert first("(?:ai|bot)s?") == [(ord("a"), ord("a")), (ord("b"), ord("b"))]
    assert first("[a-c]x") == [(ord("a"), ord("c"))]
    assert first("(?:dear )+x") == [(ord("d"), ord("d"))]
    for unclear in ("(?:the )?model", r"\w+ ignore", "^to", "(?=a)b", "[^a]b", "(?:|a)b", "(?i:a)"):
        assert first(unclear) is None, unclear
