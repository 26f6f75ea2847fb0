"""The reader's training groups: the answering sentences first, then negatives of the same
paragraph, and with ``followers`` the sentence after each answering one always among them."""

from __future__ import annotations

import random

from veracity.bench.reading.chooser import example_groups
from veracity.reader.choice import pair_ids
from veracity.reader.features import ReadingExample
from veracity.reader.tokenizer import default_tokenizer
from veracity.text.sentences import split_sentences

SENTENCES = [f"Sentence number {n} talks about topic {n}." for n in range(12)]
CONTEXT = " ".join(SENTENCES)


def _example() -> ReadingExample:
    answer = "topic 3"
    return ReadingExample(
        example_id="q1", source="test", language="en", title="Topics", context=CONTEXT,
        question="Which sentence talks about topic 3?", answers=((answer, CONTEXT.index(answer)),),
        impossible=False,
    )  # fmt: skip


def _sentence_of(tokenizer, row: tuple[int, ...], context_tokens: int) -> int:
    """Which sentence of the paragraph ``row`` pairs with the question."""
    example = _example()
    sentences = [CONTEXT[b:e] for b, e in split_sentences(CONTEXT)]
    for n, sentence in enumerate(sentences):
        previous = sentences[n - 1] if n else ""
        built = pair_ids(
            tokenizer, example.question, "Topics", sentence, previous=previous, context_tokens=context_tokens
        )
        if tuple(built) == row:
            return n
    raise AssertionError("a row that pairs with no sentence of the paragraph")


def test_the_sentence_after_the_answer_is_a_negative_only_when_asked_for() -> None:
    tokenizer = default_tokenizer()
    plain = example_groups(_example(), tokenizer, 2, random.Random(0), None)
    again = example_groups(_example(), tokenizer, 2, random.Random(0), None)
    assert plain == again  # seeded: the shipped reader's groups are reproduced
    with_followers = example_groups(_example(), tokenizer, 2, random.Random(0), None, 8, followers=True)
    group = with_followers[0]
    read = [_sentence_of(tokenizer, row, 8) for row in group.rows]
    assert read[0] == 3 and group.positives == (0,)  # the answering sentence first, the only positive
    assert read[1] == 4 and len(read) == 3  # the one after it, then the rest up to the negatives asked
    assert len(plain[0].rows) == 3
