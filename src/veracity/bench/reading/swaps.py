"""Unanswerable questions made from answerable ones, for training only.

Most of SQuAD 2.0's unanswerable questions were written against their paragraph by changing an
answerable one: another name, another number, another title (Rajpurkar et al. 2018, table 3). The
licence-checked training data holds few of them (347 in the first articles of SQuAD 2.0 train),
so the sentence reader learns "no answer" mostly from paragraphs that lack the question's words.
Here an answerable question gets one of its names, titles or numbers replaced by one that its
paragraph never mentions, taken from another paragraph of the same source; the paragraph keeps the
sentence that answered the original, now a negative that shares every other word of the question.

What counts as a name is script-level (a run of capitalised Latin words not opening the
question; a run of digits; the example's title), never a word list.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from ...reader.features import ReadingExample

_NAME: Final = re.compile(r"(?<![\w'’-])[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")
_SENTENCE_END: Final = ".!?:;\"“”\n"
_NUMBER: Final = re.compile(r"\d+")
SWAP_SUFFIX: Final = ":swap"


def _names(text: str) -> list[tuple[int, int]]:
    """Runs of capitalised words, except at the opening of a sentence (where any word is)."""
    return [m.span() for m in _NAME.finditer(text) if text[: m.start()].rstrip()[-1:] not in _SENTENCE_END]


def _absent(candidate: str, context: str) -> bool:
    return candidate.lower() not in context.lower()


def _title(example: ReadingExample) -> str:
    return example.title.replace("_", " ")


def _number_swap(text: str, context: str, rng: random.Random) -> list[tuple[int, int, str]]:
    swaps = []
    for match in _NUMBER.finditer(text):
        digits = match.group()
        if len(digits) == 4 and digits[0] in "12":  # a year: a nearby one reads as plausible
            options = [str(int(digits) + shift) for shift in range(-30, 31) if shift]
        else:
            low = 10 ** (len(digits) - 1) if len(digits) > 1 else 1
            options = [str(rng.randrange(low, 10 ** len(digits))) for _ in range(20)]
        options = [o for o in options if o != digits and _absent(o, context)]
        if options:
            swaps.append((match.start(), match.end(), rng.choice(options)))
    return swaps


def swapped_question(
    example: ReadingExample,
    names_by_words: dict[int, list[str]],
    titles: Sequence[str],
    rng: random.Random,
) -> ReadingExample | None:
    """``example`` asked about something its paragraph never mentions, or ``None`` when the
    question holds nothing to replace. Answers are kept: they mark the sentence that answered the
    original question (a negative now); ``impossible`` is set."""
    question, context = example.question, example.context
    choices: list[tuple[int, int, str]] = []
    title = _title(example)
    at = question.lower().find(title.lower()) if title else -1
    if at >= 0:
        others = [t for t in titles if t != title and _absent(t, context)]
        if others:
            choices.append((at, at + len(title), rng.choice(others)))
    for begin, end in _names(question):
        words = len(question[begin:end].split())
        pool = [n for n in names_by_words.get(words, ()) if _absent(n, context)]
        if pool and question[begin:end].lower() in context.lower():
            choices.append((begin, end, rng.choice(pool)))
    choices.extend(_number_swap(question, context, rng))
    if not choices:
        return None
    begin, end, replacement = rng.choice(choices)
    changed = question[:begin] + replacement + question[end:]
    return replace(example, example_id=example.example_id + SWAP_SUFFIX, question=changed, impossible=True)


def swapped_questions(
    examples: Sequence[ReadingExample], share: float, seed: int = 0
) -> list[ReadingExample]:
    """For ``share`` of the answerable examples (seeded), :func:`swapped_question`, with names and
    titles drawn from the other paragraphs of the example's own source."""
    names: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    titles: dict[str, set[str]] = defaultdict(set)
    for example in examples:
        for begin, end in _names(example.context):
            name = example.context[begin:end]
            names[example.source][len(name.split())].add(name)
        titles[example.source].add(_title(example))
    pools = {
        source: {count: sorted(found) for count, found in by_count.items()}
        for source, by_count in names.items()
    }
    title_lists = {source: sorted(found) for source, found in titles.items()}
    rng = random.Random(seed)
    swapped = []
    for example in examples:
        if example.impossible or not example.answers or rng.random() >= share:
            continue
        made = swapped_question(example, pools.get(example.source, {}), title_lists[example.source], rng)
        if made is not None:
            swapped.append(made)
    return swapped
