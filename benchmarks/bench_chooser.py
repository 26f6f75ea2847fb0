"""What the sentence reader's second choice stage adds to an answer's time, against the same answer
without it, in one process.

For each sampled question of a QA set (``veracity bench answers`` layout), one retrieval, then the
answer step (decision and extractive composition, no retry) twice, interleaved so that both see
the same machine load:

- **with choice**: the answer model's choice stage, the chooser rereading up to ``CHOICE_DEPTH``
  first-stage candidates per sub-question and trust tier;
- **first stage** (the peer): the same model with ``choice`` removed.

Warm figures: the knowledge base, the embedder and the chooser are loaded and one question is
answered before timing; retrieval is timed once per question for scale (it is the same for
both). Printed: p50 / p95 of retrieval, of each answer step, of their paired difference, and the
chooser's pairs and tokens per answer (the candidate count the difference is for).

    python benchmarks/bench_chooser.py ../shared/datasets/squad2_dev_half --part report --sample 100
    python benchmarks/bench_chooser.py ../shared/datasets/cmrc2018 --split dev --sample 100 \\
        --answer-model PATH --chooser PATH
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from veracity.bench.answers import AS_OF, ROLE, TARGET_VERSION, TENANT, build_kb
from veracity.bench.qa import load_qa
from veracity.index.embedders import make_embedder
from veracity.model.contracts import Principal
from veracity.pipeline.answer import compose
from veracity.pipeline.decision import AnswerInputs, AnswerModel, chooser_of, model_for_embedder
from veracity.pipeline.engine import sentence_embedding
from veracity.reader.choice import ChoiceModel, Chooser, named_chooser
from veracity.reader.runtimes import RUNTIMES


@dataclass
class CountingChooser:
    """Passes every call to ``inner`` and counts the pairs it scored."""

    inner: ChoiceModel
    pairs: int = 0
    calls: int = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def version(self) -> str:
        return self.inner.version

    def scores(self, question: str, candidates: Sequence[tuple[str, ...]]) -> list[float]:
        self.calls += 1
        self.pairs += len(candidates)
        return self.inner.scores(question, candidates)


def percentiles(values: Sequence[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered):8.1f} | {p95:8.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("dataset", type=Path, help="a QA folder (corpus.jsonl, queries.jsonl, …)")
    parser.add_argument("--split", default=None)
    parser.add_argument("--part", default="all")
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--embedder", default="use", choices=["use", "e5", "fake"])
    parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache/veracity/bench-answers")
    parser.add_argument(
        "--answer-model", type=Path, default=None, help="an answer_model.json with a choice stage"
    )
    parser.add_argument("--chooser", default=None, help="shipped or a chooser's .npz (default: the model's)")
    parser.add_argument(
        "--runtime", choices=["auto", *RUNTIMES], default="auto", help="what computes the chooser's logits"
    )
    args = parser.parse_args()

    qa = load_qa(args.dataset, args.split, args.part)
    embedder = make_embedder(args.embedder)
    kb = build_kb(qa, embedder, args.workdir / f"{qa.name}-{qa.split}")
    if args.answer_model is not None:
        import json

        model = AnswerModel.from_dict(json.loads(args.answer_model.read_text(encoding="utf-8")))
    else:
        model = model_for_embedder(embedder.model_id)
    if model.choice is None:
        parser.error("the answer model has no choice stage: give --answer-model with one")
    inner = named_chooser(args.chooser) if args.chooser is not None else chooser_of(model)
    assert isinstance(inner, Chooser), "--chooser none leaves nothing to measure"
    if args.runtime != "auto":
        inner = inner.in_runtime(args.runtime)
    chooser = CountingChooser(inner)
    peer = replace(model, choice=None)
    principal = Principal.of(TENANT, ROLE)
    embed = sentence_embedding(embedder)
    items = qa.sample(args.sample, args.seed)

    def answer_time(retrieval, answer_model) -> float:  # type: ignore[no-untyped-def]
        inputs = AnswerInputs(
            weights=retrieval.term_weights,
            question_vector=retrieval.query_vector,
            embed=embed,
            model=answer_model,
            chooser=chooser,
        )
        started = time.perf_counter()
        compose(retrieval.question, retrieval.packet, retrieval.documents, None, inputs=inputs)
        return (time.perf_counter() - started) * 1000

    warm = kb.retrieve(kb.query(items[0].question, principal, TARGET_VERSION, AS_OF))
    answer_time(warm, model)
    chooser.pairs = chooser.calls = 0
    fetch, first, second = [], [], []
    for number, item in enumerate(items):
        started = time.perf_counter()
        retrieval = kb.retrieve(kb.query(item.question, principal, TARGET_VERSION, AS_OF))
        fetch.append((time.perf_counter() - started) * 1000)
        if number % 2:  # alternate which runs first
            first.append(answer_time(retrieval, peer))
            second.append(answer_time(retrieval, model))
        else:
            second.append(answer_time(retrieval, model))
            first.append(answer_time(retrieval, peer))
    load = os.getloadavg()[0]
    print(f"{qa.name} {qa.split} part {args.part}: {len(items)} questions, warm, load average {load:.2f}")
    per_answer = chooser.pairs / len(items)
    print(f"chooser {chooser.version} ({inner.runtime}): {chooser.calls} calls,"
          f" {per_answer:.1f} pairs per answer")  # fmt: skip
    print("| stage (ms, warm) | p50 | p95 |\n|---|---|---|")
    print(f"| retrieval (the same for both) | {percentiles(fetch)} |")
    print(f"| answer step, first stage only (peer) | {percentiles(first)} |")
    print(f"| answer step, with the choice stage | {percentiles(second)} |")
    added = [b - a for a, b in zip(first, second, strict=True)]
    print(f"| added by the choice stage (paired) | {percentiles(added)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
