"""The reader's windows, span decoding and claim choice, and the answer step with a reader.

The pipeline is tested with :class:`~veracity.testing.fakes.FakeReader` (it finds a known
answer text); the real :class:`~veracity.reader.model.Reader` passes the same contract with an
untrained one-layer head, so these tests need no trained weights.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from veracity.fixtures import tenant_config
from veracity.index.embedders import FakeEmbedder
from veracity.model.contracts import AnswerStatus, Principal
from veracity.pipeline.engine import Engine
from veracity.pipeline.reading import claim_bounds
from veracity.reader.e5_file import load_state_dict, read_e5_file
from veracity.reader.features import ReadingExample, WindowMaker, hard_negatives, passage_text, windows
from veracity.reader.model import ChoosingReader, Reader, ReadingModel, best_span
from veracity.reader.tokenizer import Tokenizer
from veracity.testing.fakes import FakeReader
from veracity.text.sentences import split_sentences


@lru_cache(maxsize=1)
def _tokenizer() -> Tokenizer:
    return Tokenizer(read_e5_file().tokenizer)


def test_a_window_targets_the_tokens_of_the_answer() -> None:
    maker = WindowMaker(_tokenizer(), max_length=64, stride=16)
    passage = "Daily snapshots are kept for 30 days. " * 2 + "Weekly snapshots are kept for 12 weeks. " * 6
    at = passage.index("12 weeks")
    found = list(maker.windows("How long are weekly snapshots kept?", passage, [(at, at + len("12 weeks"))]))
    assert len(found) > 1 and all(len(w.input_ids) <= 64 for w in found)
    hits = [w for w in found if w.start]
    assert hits, "no window holds the answer"
    offsets = maker.passage_tokens(passage)[1]
    for w in hits:
        first = offsets[w.first + w.start - w.passage_start][0]
        last = offsets[w.first + w.end - w.passage_start][1]
        assert passage[first:last] == "12 weeks"
    assert all(w.start == w.end == 0 for w in found if w not in hits)


def test_training_windows_and_hard_negatives() -> None:
    def example(number: int, context: str, question: str, answer: str) -> ReadingExample:
        return ReadingExample(
            f"e{number}", "src", "en", "Guide", context, question, ((answer, context.index(answer)),), False
        )

    examples = [
        example(1, "Daily snapshots are kept for 30 days.", "How long are daily snapshots kept?", "30 days"),
        example(
            2, "Weekly snapshots go to the archive bucket.", "Where do weekly snapshots go?", "archive bucket"
        ),
        example(3, "Daily reports are mailed at noon.", "When are daily reports mailed?", "noon"),
    ]
    negatives = hard_negatives(examples)
    assert negatives["e1"] in {examples[1].context, examples[2].context}
    assert all(negatives[e.example_id] != e.context for e in examples if e.example_id in negatives)
    rows = list(windows(examples, WindowMaker(_tokenizer()), negatives))
    assert {r.kind for r in rows} == {"answer", "negative"}
    assert passage_text("Guide > Backups", "body") == ("Guide > Backups\nbody", 16)


def test_best_span_keeps_start_before_end_and_a_bounded_length() -> None:
    starts = np.array([9.0, 0.0, 1.0, 5.0, 0.0, 0.0], dtype=np.float32)
    ends = np.array([9.0, 4.0, 0.0, 0.0, 3.0, 0.0], dtype=np.float32)
    # token 0 is <s>: never part of a span; an end before its start is no span
    assert best_span(starts, ends, 1, 6) == (3, 4, 8.0)


def test_the_claim_is_the_sentence_of_the_span_a_table_row_with_its_header() -> None:
    text = "Backups\n\nDaily snapshots are kept for 30 days. No.\n\n"
    text += "| Plan | Days |\n| --- | --- |\n| Team | 30 |"
    units = split_sentences(text)
    at = text.index("30 days")
    assert claim_bounds(text, units, at, at + 7)[:2] == (9, 46)
    row = text.index("| Team")
    start, end, header = claim_bounds(text, units, row + 2, row + 6)
    assert text[start:end] == "| Team | 30 |" and header == "| Plan | Days |\n| --- | --- |"
    short = text.index("No.")
    start, end, _ = claim_bounds(text, units, short, short + 2)
    assert text[start:end] == "Daily snapshots are kept for 30 days. No."  # a fragment leans on its neighbour


def test_the_real_reader_keeps_the_contract_with_an_untrained_head() -> None:
    model_file = read_e5_file()
    weights = load_state_dict(model_file, compact_word_embeddings=True)
    weights = {
        k: v
        for k, v in weights.items()
        if not k.startswith("encoder.layer.") or k.startswith("encoder.layer.0.")
    }
    rng = np.random.default_rng(0)
    weights["qa_outputs.weight"] = rng.normal(0, 0.02, (2, 384)).astype(np.float32)
    weights["qa_outputs.bias"] = np.zeros(2, dtype=np.float32)
    reader = Reader(weights, _tokenizer(), meta={"max_length": 64, "stride": 16, "thresholds": {"zh": 1.5}})
    fake = FakeReader({})
    for model in (reader, fake):
        assert isinstance(model, ReadingModel)
    bodies = [
        ("Guide", "Daily snapshots are kept for 30 days. " * 8),
        ("", "每日快照默认保留 30 天。"),
        ("T", ""),
    ]
    readings = reader.read("How long are snapshots kept?", bodies)
    assert len(readings) == 3
    for (_, body), reading in zip(bodies[:2], readings[:2], strict=True):
        assert 0 <= reading.start <= reading.end <= len(body) and np.isfinite(reading.score)
    assert reading.score == readings[1].score and readings[2].start == -1
    assert reader.threshold_for("zh") == 1.5 and reader.threshold_for("en") == 0.0


@pytest.fixture(scope="module")
def demo() -> Engine:
    return Engine.demo(FakeEmbedder())


def _ask(kb: Engine, question: str):
    return kb.ask(question, Principal.of("starship", "public"), "3.2", tenant_config().as_of)


def test_with_a_reader_the_claim_is_the_sentence_holding_its_span(demo: Engine) -> None:
    question = "3.2 的 Team 能用 SAML 吗"
    demo.reader = FakeReader({question: "需要升级到 Enterprise 计划"})
    try:
        answer = _ask(demo, question)
    finally:
        demo.reader = None
    assert answer.status is AnswerStatus.ANSWER
    assert "需要升级到 Enterprise 计划" in answer.claims[0].text and answer.claims[0].text.endswith("OIDC。")
    decision = answer.trace.to_dict()["decisions"][0]
    assert decision["score"] == 5.0 and decision["threshold"] == 0.0 and "reader_span" in decision["features"]


def test_with_a_reader_nothing_found_abstains(demo: Engine) -> None:
    demo.reader = FakeReader({})
    try:
        answer = _ask(demo, "3.2 支持量子加密登录吗？")
    finally:
        demo.reader = None
    assert answer.status is AnswerStatus.ABSTAIN and not answer.claims


def test_a_choosing_reader_picks_the_claim_and_the_logistic_models_decide(demo: Engine) -> None:
    question = "3.2 的 Team 能用 SAML 吗"
    plain = _ask(demo, question)
    demo.reader = ChoosingReader(FakeReader({question: "需要升级到 Enterprise 计划"}))
    try:
        chosen = _ask(demo, question)
        demo.reader = ChoosingReader(FakeReader({}))  # it finds nothing: the logistic's claim stays
        unchanged = _ask(demo, question)
    finally:
        demo.reader = None
    decision = plain.trace.to_dict()["decisions"][0]
    assert chosen.status is plain.status is AnswerStatus.ANSWER
    assert "需要升级到 Enterprise 计划" in chosen.claims[0].text
    assert "需要升级到 Enterprise 计划" not in plain.claims[0].text
    assert chosen.trace.to_dict()["decisions"][0]["score"] == decision["score"]  # not the reader's 5.0
    assert [c.text for c in unchanged.claims] == [c.text for c in plain.claims]


def test_a_reader_role_is_checked() -> None:
    from veracity.model.errors import ConfigError
    from veracity.reader.model import named_reader

    assert named_reader("none", "choose") is None
    with pytest.raises(ConfigError, match="reader role"):
        named_reader("none", "rerank")


_NEGATIVES_PROGRAM = """
import json
from veracity.reader.features import ReadingExample, hard_negatives
words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]
contexts = [f"The {a} and the {b} are stored together, answer {n}." for n, (a, b) in enumerate(
    (a, b) for a in words for b in words if a < b)]
def asked(c):
    return f"Where are the {' and the '.join(c.split()[1:6:3])}?"
examples = [ReadingExample(f"e{n}", "src", "en", "T", c, asked(c), ((f"answer {n}", c.index(f"answer {n}")),),
                           False) for n, c in enumerate(contexts)]
print(json.dumps(hard_negatives(examples), sort_keys=True))
"""


def test_hard_negatives_are_the_same_in_every_process() -> None:
    """Ties and float sums must not follow a set's order, which changes with the string hashes of
    each process (``PYTHONHASHSEED``)."""
    import os
    import subprocess
    import sys

    outputs = set()
    for hash_seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", _NEGATIVES_PROGRAM], capture_output=True, text=True, env=env, check=True
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
