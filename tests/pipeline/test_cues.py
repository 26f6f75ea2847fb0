"""The cue patterns match exactly where the one-edge-per-fragment reference form matches.

``cues._compile`` writes the word-edge lookbehind once per family (it is ≈ 6× faster);
``cues._compile_each`` is the plain form. Every family must give the same match spans on
the demo fixture, the injection benchmark's tune corpus, and strings built from the cue
fragments themselves with random neighbours.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from veracity.bench.injection.corpus import generate, labeled_chunks, select
from veracity.catalog.demo import demo_catalog
from veracity.pipeline.injection import cues
from veracity.pipeline.injection.signals import sentences
from veracity.text.reveal import reveal

REFERENCE = {name: cues._compile_each(fragments) for name, fragments in cues.FAMILIES.items()}


def assert_same_spans(text: str) -> None:
    for name, pattern in cues.PATTERNS.items():
        expected = [m.span() for m in REFERENCE[name].finditer(text)]
        assert [m.span() for m in pattern.finditer(text)] == expected, (name, text[:120])


def revealed_sentences(text: str) -> list[str]:
    return [s for segment in reveal(text).segments for s in sentences(segment.text)]


def test_same_spans_on_the_fixture_and_the_tune_corpus() -> None:
    catalog = demo_catalog()
    texts = [c.text for d in catalog.documents() for c in catalog.chunks(d.document_id)]
    texts += [labeled.chunk.text for sample in select(generate(seed=0, variants=2), split="tune")
              for labeled in labeled_chunks(sample)]  # fmt: skip
    checked = 0
    for text in texts:
        for sentence in revealed_sentences(text):
            assert_same_spans(sentence)
            checked += 1
    assert checked > 1000


FRAGMENTS = sorted({f.rstrip("~").replace("~", "") for fs in cues.FAMILIES.values() for f in fs if f})
FILLER = st.sampled_from([" ", "", "x", "的", "，", "-", "AI", "2", "。", "'", "(", "é"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), FILLER), min_size=1, max_size=12))
def test_same_spans_on_strings_made_of_cue_fragments(parts: list[str]) -> None:
    text = "".join(parts)
    assert_same_spans(text.casefold())
