"""Where the answer step loses a documentation question: which stage the sentence holding the
answer was lost at.

    python benchmarks/docs_loss_classes.py DOCS_DIR QUESTIONS.yaml --kb WORKDIR [--split all]

The folder is ingested (or the knowledge base reused) as ``bench_docs_questions.py`` does, and every
answerable question of the split is asked as the default public user. For each one, the sentence
candidates the answer step ranked are read (the ask's trace keeps ids and digests only, so
``decision.rechoose`` is wrapped for the run) and the question falls in the first class that holds:

- **no gold sentence among the candidates**: no candidate sentence of any sub-question or trust
  tier holds a gold string (retrieval, chunking or sentence splitting lost it);
- **gold below the reader's depth**: one does, but never within the first ``CHOICE_DEPTH`` of the
  first stage, so the sentence reader never read it;
- **gold read, another chosen**: the reader read it and another candidate came first;
- **gold chosen, abstained** / **gold chosen, answered**: it came first, and the decision abstained
  or answered.

A gold string counts in the sentence itself (case, whitespace and Markdown emphasis ignored), not in
its heading path, so "gold chosen, answered" can be a little lower than ``bench_docs_questions.py``'s
correct count. Use it on tuning sets: it reads every question.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from bench_docs_questions import add_folder_arguments

import veracity
import veracity.pipeline.decision as decision
from veracity.bench.docs_questions import holds_gold, load_docs_questions, split_of
from veracity.model.contracts import AnswerStatus
from veracity.pipeline.choice import CHOICE_DEPTH

CLASSES = (
    "no gold sentence among the candidates",
    "gold below the reader's depth",
    "gold read, another chosen",
    "gold chosen, abstained",
    "gold chosen, answered",
)

Ranking = tuple[list[str], list[str]]
"""The claims of one ``rechoose`` call: in first-stage order, and as chosen (best first)."""


@contextmanager
def recorded_rankings() -> Iterator[list[Ranking]]:
    """Every ranking the answer step makes while the block runs."""
    calls: list[Ranking] = []
    original = decision.rechoose

    def recording(choice: Any, chooser: Any, question: str, ranked: Any, **options: Any) -> Any:
        chosen = original(choice, chooser, question, ranked, **options)
        calls.append(([c.claim for _, c in ranked], [c.claim for _, c in chosen]))
        return chosen

    decision.rechoose = recording
    try:
        yield calls
    finally:
        decision.rechoose = original


def loss_class(rankings: Sequence[Ranking], answers: Sequence[str], answered: bool) -> str:
    """The first class of :data:`CLASSES` that holds for one question."""
    if not any(holds_gold(claim, answers) for first, _ in rankings for claim in first):
        return CLASSES[0]
    if not any(holds_gold(claim, answers) for first, _ in rankings for claim in first[:CHOICE_DEPTH]):
        return CLASSES[1]
    if not any(chosen and holds_gold(chosen[0], answers) for _, chosen in rankings):
        return CLASSES[2]
    return CLASSES[4] if answered else CLASSES[3]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_folder_arguments(parser)
    args = parser.parse_args(argv)
    spec = load_docs_questions(args.questions)
    questions = [
        q
        for q in spec.questions
        if q.answerable and (args.split == "all" or split_of(q.question_id) == args.split)
    ]
    counts: Counter[str] = Counter()
    with veracity.open(args.kb, embedder=args.embedder) as kb:
        kb.ingest([args.docs])
        for question in questions:
            with recorded_rankings() as rankings:
                answer = kb.ask(question.question)
            counts[loss_class(rankings, question.answers, answer.status is not AnswerStatus.ABSTAIN)] += 1
    print(f"{args.questions.name} · split {args.split} · {len(questions)} answerable questions")
    for name in CLASSES:
        print(f"  {name:40} {counts[name]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
