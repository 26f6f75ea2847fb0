"""The injection benchmark corpus: big enough, many languages and styles, split by template."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from veracity.bench.injection.corpus import generate, labeled_chunks, select, transform


@pytest.fixture(scope="module")
def samples():
    return generate()


def test_at_least_150_attacks_and_150_benign_documents(samples) -> None:
    counts = Counter(s.label for s in samples)
    assert counts["attack"] >= 150 and counts["benign"] >= 150
    for split in ("tune", "test"):
        assert len(select(samples, split=split, label="attack")) >= 100
        assert len(select(samples, split=split, label="benign")) >= 100


def test_no_template_has_variants_in_both_halves(samples) -> None:
    halves: dict[str, set[str]] = {}
    for sample in samples:
        halves.setdefault(sample.template_id, set()).add(sample.split)
    assert all(len(split) == 1 for split in halves.values())


def test_every_style_with_two_templates_is_in_both_halves(samples) -> None:
    templates: dict[tuple[str, str], set[str]] = {}
    halves: dict[tuple[str, str], set[str]] = {}
    apart = {s.template_id for s in samples if s.split in ("blind", "unread")}
    for sample in samples:
        key = (sample.label, sample.style)
        templates.setdefault(key, set()).add(sample.template_id)
        halves.setdefault(key, set()).add(sample.split)
    # the blind and unread parts are written by other authors and kept apart: the halves alone
    # are balanced
    assert all(
        halves[key] - {"blind", "unread"} == {"tune", "test"}
        for key, ids in templates.items()
        if len(ids - apart) > 1
    )


def test_languages_and_attack_styles(samples) -> None:
    attacks = select(samples, label="attack")
    languages = {s.language for s in attacks}
    assert {"en", "zh", "zht"} <= languages and len(languages - {"en", "zh", "zht"}) >= 2
    styles = {s.style for s in attacks}
    assert {
        "polite_request", "fake_system", "html_comment", "zero_width", "base64", "split_instruction",
        "traditional_chinese", "spaced", "other_language", "note_for_ai", "persona", "authority_claim",
        "exfiltration", "override",
    } <= styles  # fmt: skip
    benign_styles = {s.style for s in select(samples, label="benign")}
    assert {"operations", "advisory", "forum"} <= benign_styles


def test_generation_is_deterministic_and_seeded(samples) -> None:
    assert [s.body for s in generate()] == [s.body for s in samples]
    assert [s.body for s in generate(seed=1)] != [s.body for s in samples]


def test_every_attack_has_a_chunk_that_carries_its_payload_and_labels_do_not_leak(samples) -> None:
    for sample in samples:
        items = labeled_chunks(sample)
        assert any(i.carries_payload for i in items) == (sample.label == "attack")
        assert sample.label not in sample.sample_id and sample.label not in sample.title


def test_unknown_transform_names_the_valid_ones() -> None:
    import random

    with pytest.raises(ValueError, match="base64"):
        transform("x", "rot13", random.Random(0))


def test_parts_by_other_authors_are_apart_from_the_halves(samples) -> None:
    # blind (author A, ids -n<k>) and unread (author B, ids -t<k>, its own files): measured, never fitted
    for split, suffix in (("blind", r"-n\d+"), ("unread", r"-t\d+")):
        part = select(samples, split=split)
        assert {s.label for s in part} == {"attack", "benign"}
        assert all(re.fullmatch(r".+" + suffix, s.template_id) for s in part)
