"""The bounded retry: typo fixes from the evidence's words, rewrites, merging parts."""

from __future__ import annotations

import pytest

from veracity.model.contracts import AnswerStatus, Citation, Claim
from veracity.pipeline.retry import Part, edit_distance, merge_parts, rewrite, status_of, typo_fixes
from veracity.text.tokens import surface_tokens


@pytest.mark.parametrize(
    ("left", "right", "limit", "expected"),
    [
        ("smal", "saml", 1, 1),
        ("saml", "saml", 1, 0),
        ("oidc", "odic", 1, 1),
        ("kitten", "sitting", 3, 3),
        ("abcdef", "uvwxyz", 2, 3),
        ("登陆方式", "登录方式", 1, 1),
    ],
)
def test_edit_distance(left: str, right: str, limit: int, expected: int) -> None:
    assert edit_distance(left, right, limit) == expected


def test_a_word_no_chunk_holds_is_fixed_from_the_evidence() -> None:
    evidence = ["Team 计划不再支持旧版 SAML 单点登录", "SAML 和 OIDC"]
    assert typo_fixes(surface_tokens("Team 还能用 SMAL 吗？"), {"smal"}, evidence) == {"smal": "saml"}


def test_known_words_short_words_and_identifiers_are_left_alone() -> None:
    evidence = ["Team SAML SSO e1042"]
    assert typo_fixes(surface_tokens("team ssa e1043"), {"ssa", "e1043"}, evidence) == {}
    assert (
        typo_fixes(surface_tokens("Team 还能用 SMAL 吗？"), set(), ["SAML"]) == {}
    )  # a word the evidence holds


def test_rewrite_replaces_whole_words_case_insensitively() -> None:
    assert rewrite("Can Team use SMAL? smal!", {"smal": "saml"}) == "Can Team use saml? smal!"
    assert rewrite("unchanged", {}) == "unchanged"


def _citation(cid: int, chunk: str) -> Citation:
    return Citation(cid, "d", "s", "1", chunk, (), 0, 1, "x")


def test_merge_keeps_one_number_per_chunk_and_skips_repeated_claims() -> None:
    claims = (Claim("a", (1,)),)
    citations = (_citation(1, "c1"),)
    part = Part(
        index=1,
        claims=(Claim("b", (1, 2)), Claim("a", (1,))),
        citations=(_citation(1, "c2"), _citation(2, "c1")),
    )
    merged_claims, merged_citations = merge_parts(claims, citations, [part])
    assert [c.text for c in merged_claims] == ["a", "b"]
    assert merged_claims[1].citation_ids == (2, 1)
    assert [(c.citation_id, c.chunk_id) for c in merged_citations] == [(1, "c1"), (2, "c2")]


def test_status_of_counts() -> None:
    assert status_of(2, 2) is AnswerStatus.ANSWER
    assert status_of(1, 2) is AnswerStatus.PARTIAL
    assert status_of(0, 2) is AnswerStatus.ABSTAIN and status_of(0, 0) is AnswerStatus.ABSTAIN


def test_a_retried_ask_times_its_retries_stages_too(fake_kb, ask_public) -> None:
    # the retry's retrieval and reading are stages of this ask: timed where they ran, not lost
    # in the answer step's remainder; the trace's JSON sums a stage's entries
    once = ask_public(fake_kb, "3.2 的 Team 能用 SAML 吗")
    retried = ask_public(fake_kb, "3.2 的 Taem 能用 SAML 吗")  # a typo the retry fixes
    assert once.trace.retry == () and ("rewritten_words", "1") in retried.trace.retry
    stages = [stage for stage, _ in retried.trace.timings_ms]
    assert stages.count("bm25") == 2 * [stage for stage, _ in once.trace.timings_ms].count("bm25")
    summed = retried.trace.to_dict(timings=True)["timings_ms"]
    bm25 = sum(ms for stage, ms in retried.trace.timings_ms if stage == "bm25")
    assert summed["bm25"] == round(bm25, 3) and set(summed) == set(stages)
