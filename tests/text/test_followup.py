"""Follow-up questions resolved against the turn before: subjects, versions, acronyms, or as written."""

from __future__ import annotations

import pytest

from veracity.text.followup import resolve_followup


@pytest.mark.parametrize(
    ("question", "previous", "previous_version", "resolved", "version", "carried"),
    [
        ("What about the Enterprise plan?", "Can Team plans use SAML?", None,
         "Can Enterprise plan use SAML?", None, {"subject": "Team plans → Enterprise plan"}),
        ("那 Enterprise 计划呢？", "3.2 的 Team 计划能用 SAML 吗？", None,
         "3.2 的 Enterprise 计划能用 SAML 吗？", None, {"subject": "Team 计划 → Enterprise 计划"}),
        ("那 2.8 呢？", "3.2 的 Team 计划能用 SAML 吗？", "3.2",
         "2.8 的 Team 计划能用 SAML 吗？", "2.8", {"subject": "3.2 → 2.8"}),
        ("那 2.8 呢？", "3.2 的 Team 计划能用 SAML 吗？", None,
         "2.8 的 Team 计划能用 SAML 吗？", None, {"subject": "3.2 → 2.8"}),
        ("What about version 2.8?", "Can Team plans use SAML?", "3.2",
         "Can Team plans use SAML?", "2.8", {"subject": "version → 2.8"}),
        ("And SCIM?", "Can Team plans use SAML?", None,
         "Can Team plans use SCIM?", None, {"subject": "SAML → SCIM"}),
        ("How many seats does the plan have?", "Can Team plans use SAML?", "3.2",
         "How many seats does the plan have?", "3.2", {"version": "3.2"}),
        ("How many seats in 2.8?", "Can Team plans use SAML?", "3.2",
         "How many seats in 2.8?", None, {}),
        ("那企业版呢？", "Team 计划支持 SAML 吗？", None, "那企业版呢？", None, {}),
        ("What about Team plans?", "Can Team plans use SAML?", None, "What about Team plans?", None, {}),
    ],
)  # fmt: skip
def test_follow_ups(question, previous, previous_version, resolved, version, carried) -> None:
    got = resolve_followup(question, previous, previous_version, None)
    assert (got.question, got.version, got.carried) == (resolved, version, carried)


def test_a_first_question_and_a_given_version_are_kept() -> None:
    assert (
        resolve_followup(" Can Team plans use SAML? ", None, None, "3.2").question
        == "Can Team plans use SAML?"
    )
    given = resolve_followup("What about the Enterprise plan?", "Can Team plans use SAML?", "3.2", "2.8")
    assert given.version == "2.8" and "version" not in given.carried


def test_a_follow_up_version_replaces_a_series_the_question_named() -> None:
    asked = resolve_followup("那 3.1 呢？", "2.x 版本的 API 每分钟允许多少请求？", "2.5", None)
    assert asked.question == "3.1 版本的 API 每分钟允许多少请求？" and asked.version == "3.1"
    assert asked.carried == {"subject": "2.x → 3.1"}
