"""The sentence reader (chooser): the contract every chooser keeps, the pair it reads, the second
choice stage, and the shipped chooser's card and digest (when one is shipped)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from veracity.model.contracts import Chunk, ChunkKind, Hit, Scores
from veracity.pipeline.candidates import Candidate
from veracity.pipeline.choice import CHOICE_DEPTH, reader_input, rechoose, second_stage
from veracity.pipeline.decision import AnswerModel, LogisticModel, Ranked, shipped_model
from veracity.reader.choice import (
    MAX_LENGTH,
    MODEL_NAME,
    ChoiceModel,
    chooser_files,
    load_chooser,
    pair_ids,
)
from veracity.reader.model import weights_digest
from veracity.reader.tokenizer import default_tokenizer
from veracity.testing.fakes import FakeChooser

WEIGHTS, CARD = chooser_files(MODEL_NAME)
SHIPPED = WEIGHTS.is_file()
QUESTION = "How long are daily snapshots kept?"
ANSWER = "Daily snapshots are kept for 30 days."
OTHER = "Snapshots are stored in a second region."


def choosers() -> list[ChoiceModel]:
    found: list[ChoiceModel] = [FakeChooser({QUESTION: "30 days"})]
    if SHIPPED:
        found.append(load_chooser())
    return found


@pytest.mark.parametrize("chooser", choosers(), ids=lambda c: c.version)
def test_every_chooser_keeps_the_contract(chooser: ChoiceModel) -> None:
    assert isinstance(chooser, ChoiceModel)
    candidates = [("Backups", OTHER), ("Backups", ANSWER)]
    scores = chooser.scores(QUESTION, candidates)
    assert len(scores) == 2 and all(math.isfinite(s) for s in scores)
    assert scores[1] > scores[0]  # the sentence that answers scores higher
    assert chooser.scores(QUESTION, candidates) == scores  # deterministic
    assert chooser.scores(QUESTION, []) == []


def test_the_pair_is_question_then_subject_and_sentence_cut_to_the_window() -> None:
    tokenizer = default_tokenizer()
    ids = pair_ids(tokenizer, QUESTION, "Backups", ANSWER)
    assert ids[0] == tokenizer.bos and ids[-1] == tokenizer.eos
    assert ids.count(tokenizer.eos) == 3  # </s></s> between the two texts, </s> at the end
    long_ids = pair_ids(tokenizer, QUESTION * 20, "Backups", ANSWER * 40)
    assert len(long_ids) == MAX_LENGTH and long_ids[-1] == tokenizer.eos
    assert reader_input("Backups", "| a | b |", "| h | i |\n|---|---|", "before") == (
        "Backups",
        "| h | i |\n|---|---|\n| a | b |",
        "",  # a table row reads its header, not the row before
    )
    assert reader_input("Backups", ANSWER, "", "before") == ("Backups", ANSWER, "before")
    plain = pair_ids(tokenizer, QUESTION, "Backups", ANSWER, previous="Before that.")
    assert plain == ids  # without context tokens the sentence before is not read
    read = pair_ids(tokenizer, QUESTION, "Backups", ANSWER, previous="Before that.", context_tokens=2)
    before = tokenizer.encode("Before that.", add_special_tokens=False)
    assert read == [*ids[:-1], tokenizer.eos, *before[-2:], tokenizer.eos]  # after the sentence, its tail
    long_context = pair_ids(tokenizer, QUESTION, "Backups", ANSWER * 40, previous="x y z", context_tokens=8)
    assert long_context == pair_ids(tokenizer, QUESTION, "Backups", ANSWER * 40)  # cut first


@pytest.mark.skipif(not SHIPPED, reason="no shipped chooser in this tree")
def test_the_chooser_reads_the_pairs_pair_ids_builds_though_it_keeps_tokenized_sentences() -> None:
    chooser = load_chooser()
    long_question = QUESTION + " " + "and what else is kept there " * 8
    candidates = [("Backups", ANSWER), ("Backups", OTHER * 12), ("", ANSWER)]
    for question in (QUESTION, long_question, QUESTION):  # the same sentences again: read from the cache
        rows = [pair_ids(chooser.tokenizer, question, s, t) for s, t in candidates]
        expected = [round(float(v), 6) for v in chooser.logits(rows)]
        assert chooser.scores(question, candidates) == expected


CHOICE = LogisticModel(("sentence", "reader"), (1.0, 1.0), 0.0, (0.0, 0.0), (1.0, 1.0))


def test_the_second_stage_scores_the_head_and_keeps_the_tail_below_in_order() -> None:
    scores = second_stage(CHOICE, [3.0, 2.0, 1.0, 0.5], [-4.0, 4.0])
    assert scores[:2] == [-1.0, 6.0]
    assert scores[2] < min(scores[:2]) and scores[3] < scores[2]


def _candidate(chunk_id: str, text: str, first_stage: float) -> tuple[Ranked, Candidate]:
    chunk = Chunk(chunk_id, "d", "digest", ("Backups",), 0, 0, len(text), ChunkKind.PARAGRAPH, text)
    hit = Hit(chunk=chunk, rank=1, scores=Scores())
    candidate = Candidate(
        hit=hit, start=0, end=len(text), claim_start=0, features={"coverage": 0.5}, subject="Backups"
    )
    return Ranked(first_stage, text, candidate.features, None), candidate


def test_rechoose_puts_the_sentence_the_reader_finds_first_and_records_its_logit() -> None:
    ranked = [_candidate("a", OTHER, 3.0), _candidate("b", ANSWER, 2.0)]
    ranked += [_candidate(f"t{i}", OTHER, 1.0 - i) for i in range(CHOICE_DEPTH)]
    chooser = FakeChooser({QUESTION: "30 days"})
    out = rechoose(CHOICE, chooser, QUESTION, ranked)
    assert out[0][1].hit.chunk.chunk_id == "b" and out[0][0].features["reader"] == 4.0
    assert out[0][1].features["reader"] == 4.0
    assert chooser.calls == [(QUESTION, CHOICE_DEPTH)]  # only the head is read
    assert [r.score for r, _ in out] == sorted((r.score for r, _ in out), reverse=True)
    assert "reader" not in out[-1][0].features  # the tail was not read


def test_an_answer_model_keeps_its_choice_stage_through_json() -> None:
    base = shipped_model()
    model = replace(base, choice=CHOICE, meta={**base.meta, "chooser": {"name": "fake", "version": "v"}})
    again = AnswerModel.from_dict(json.loads(json.dumps(model.to_dict())))
    assert again.choice == CHOICE and again.meta["chooser"]["name"] == "fake"
    assert AnswerModel.from_dict(json.loads(json.dumps(base.to_dict()))).choice == base.choice


def test_the_shipped_answer_model_names_the_shipped_chooser() -> None:
    model = shipped_model()
    assert model.choice is not None and SHIPPED  # the default answer step rereads with it
    card = json.loads(CARD.read_text(encoding="utf-8"))
    assert model.meta["chooser"] == {"name": card["name"], "version": card["version"]}


def test_the_shipped_choosers_weights_match_its_card_and_the_card_is_complete() -> None:
    card = json.loads(CARD.read_text(encoding="utf-8"))
    assert weights_digest(WEIGHTS) == card["weights_sha256"]
    assert WEIGHTS.stat().st_size <= 25 * 1024 * 1024
    assert card["command"].startswith("python -m veracity.bench.reading.chooser")
    assert card["training"]["settings"]["seed"] == 0
    for row in card["data"]:
        assert row["licence"] and len(row["sha256"]) == 64 and row["repository"]
        assert row["source"] not in ("squad2_dev_tune", "cmrc2018_trial")  # the answer models' tuning data
    assert {"en", "zh"} <= set(card["validation"])
    assert card["command"] == "python -m veracity.bench.reading.chooser --ship"
    assert {"squad2_dev_half report", "cmrc2018 dev", "drcd dev"} <= set(card["reporting"]["sets"])


def test_an_ask_times_the_sentence_reader_as_its_own_stage() -> None:
    from datetime import UTC, datetime

    from veracity.index.embedders import FakeEmbedder
    from veracity.model.contracts import Principal
    from veracity.pipeline.engine import Engine

    kb = Engine.demo(FakeEmbedder())
    principal = Principal.of("starship", "public")
    answer = kb.ask("3.2 的 Team 还能用 SAML 吗？", principal, "3.2", datetime(2026, 8, 27, tzinfo=UTC))
    stages = dict(answer.trace.timings_ms)
    assert stages["sentence_reader"] > 0 and "evidence" in stages
    assert "timings_ms" not in answer.trace.to_dict(timings=False)  # as the byte-identical reports
