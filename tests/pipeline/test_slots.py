"""Surface features of where the asked-for slot sits in a sentence."""

from __future__ import annotations

import pytest

from veracity.pipeline.slots import longest_common, opens_with, position, slot_features, value_match
from veracity.text.question_surface import read_surface, slot_sides


def test_the_sides_of_the_question_word_leave_out_particles_and_punctuation() -> None:
    assert slot_sides("天生三桥位于什么地方？") == ("天生三桥位于", "地方")
    assert slot_sides("1995年8月，王家瑞担任什么职务？") == ("王家瑞担任", "职务")
    assert slot_sides("What did the Normans win?") is None


def test_a_sentence_restating_the_question_around_a_filled_slot_scores_higher() -> None:
    question = read_surface("天生三桥位于什么地方？")
    restated = slot_features(question, "天生三桥位于重庆武隆县仙女山镇。")
    other = slot_features(question, "天生三桥是国家级风景名胜区。")
    assert restated["slot_left"] == 1.0 and restated["slot_gap"] == 1.0
    assert other["slot_left"] < 1.0 and other["slot_gap"] == 0.0


def test_the_noun_naming_the_answers_kind_may_be_skipped_on_the_right() -> None:
    found = slot_features(read_surface("《神圣十月》是由哪个杂志连载的？"), "并于《月刊Comic Blade》连载。")
    assert found["slot_right"] == 1.0


def test_values_with_units_must_match_as_such() -> None:
    question = read_surface("1995年8月，王家瑞担任什么职务？")
    assert value_match(question, "1995年8月，任青岛市委常委。") == 1.0
    assert value_match(question, "1995年9月，任青岛市副市长。") == 0.5
    assert value_match(question, "1995年18月") == 0.5  # "8月" inside "18月" is not "8月"
    assert value_match(read_surface("谁写了这本书？"), "anything") == 0.5


def test_longest_common_substring_and_opening_and_position() -> None:
    assert longest_common(read_surface("天生三桥位于什么地方？"), "天生三桥位于重庆") == 6 / 8
    assert longest_common(read_surface("What is it?"), "What is it") == 0.0
    assert opens_with("黄蝉", "", "黄蝉（学名）别称硬枝黄蝉。") == 1.0
    assert opens_with("黄蝉", "", "软枝黄蝉别称黄莺。") == 0.0
    assert opens_with("x", "Apgar score", "Apgar score is a test.") == 1.0
    assert position("b。", "a。b。c。") == pytest.approx(0.5)
    assert position("a。", "a。") == 0.0


def test_traditional_characters_meet_the_same_patterns() -> None:
    assert slot_sides("天生三橋位於什麼地方？") == slot_sides("天生三橋位於什么地方？")
    traditional = slot_features(read_surface("天生三橋位於什麼地方？"), "天生三橋位於重慶武隆縣。")
    assert traditional["slot_left"] == 1.0 and traditional["slot_gap"] == 1.0
