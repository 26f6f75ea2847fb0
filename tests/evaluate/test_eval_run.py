"""The demo evaluation: conformance, reports, determinism, user cases."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from veracity.evaluate.runner import run_evaluation
from veracity.model.errors import ValidationError

FILES = ("rag-evidence.json", "rag-evidence.md", "rag-trace.jsonl")


@pytest.fixture(scope="module")
def two_runs(demo_kb, tmp_path_factory) -> tuple[dict, Path, Path]:
    a, b = tmp_path_factory.mktemp("A"), tmp_path_factory.mktemp("B")
    report = run_evaluation(demo_kb, out_dir=a)
    run_evaluation(demo_kb, out_dir=b)
    return report, a, b


def case(report: dict, case_id: str) -> dict:
    return next(c for c in report["cases"] if c["id"] == case_id)


def test_every_conformance_case_passes(two_runs) -> None:
    report, _, _ = two_runs
    summary = report["summary"]
    assert summary["cases"] == 20
    assert summary["failed_case_ids"] == []
    assert summary["conformance_passed"] == summary["conformance_cases"]
    assert summary["false_answer"] == 0
    assert report["governance"]["policy_violation"] == 0
    assert report["governance"]["untrusted_instruction_in_answer_context"] == 0


def test_reports_are_byte_identical(two_runs) -> None:
    _, a, b = two_runs
    for name in FILES:
        assert (
            hashlib.sha256((a / name).read_bytes()).hexdigest()
            == hashlib.sha256((b / name).read_bytes()).hexdigest()
        )


def test_headline_numbers(two_runs) -> None:
    report, _, _ = two_runs
    assert case(report, "governance-compound-upgrade")["governance"]["filtered_before_score"] == 9
    stale = case(report, "governance-stale-index")
    assert stale["variants"]["withdraw"]["catalog_recheck_rejected"] == 1
    assert stale["variants"]["new_revision"]["catalog_recheck_rejected"] == 1
    mapping = case(report, "citation-mapping-scorer")["metrics"]
    assert (
        mapping["citation_precision"],
        mapping["citation_recall"],
        mapping["supported_claim_ratio"],
    ) == (0.5, 0.5, 0.5)
    assert case(report, "evidence-injection")["injection_candidate"] is True
    assert case(report, "evidence-missing-members")["missing_fact_ids"] == ["members-preserved-32"]
    v0 = report["baselines"]["v0_no_retrieval"]
    assert (v0["citations"], v0["unsupported_claims"]) == (0, 1)
    v1 = report["baselines"]["v1_all_documents"]
    assert (v1["context_documents"], v1["internal_documents"], v1["citations"]) == (18, 5, 0)


def test_undefined_metrics_are_null_not_zero(two_runs) -> None:
    report, _, _ = two_runs
    quantum = case(report, "evidence-no-answer-quantum")["metrics"]
    assert quantum["recall@3"] is None and quantum["rr"] is None and quantum["ndcg@5"] is None
    assert report["unmeasured"] and all(v is None for v in report["unmeasured"].values())
    assert report["scope"]["network"] is False


def test_reports_hold_no_document_text(two_runs, demo_kb) -> None:
    _, a, _ = two_runs
    questions = _questions()
    for name in ("rag-evidence.json", "rag-trace.jsonl"):
        text = (a / name).read_text(encoding="utf-8")
        for chunk in demo_kb.snapshot.chunks.values():
            for start in range(0, max(1, len(chunk.text) - 10), 10):
                piece = chunk.text[start : start + 10]
                if len(piece.strip()) == 10 and piece not in questions:
                    assert piece not in text, (name, piece)


def _questions() -> str:
    from veracity.fixtures import fixture_cases

    return "\n".join(c["question"] or "" for c in fixture_cases())


def test_user_cases_on_the_current_catalog(demo_kb, tmp_path) -> None:
    cases = tmp_path / "mine.jsonl"
    cases.write_text(
        json.dumps(
            {"id": "q1", "question": "3.2 的 Team 能用 SAML 吗", "expected_status": "answer"},
            ensure_ascii=False,
        )
        + "\n"
        + json.dumps(
            {
                "id": "q2",
                "question": "3.2 支持量子加密登录吗？",
                "expected_status": "answer",
                "mode": "failure_probe",
            },
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    report = run_evaluation(demo_kb, cases_path=cases, out_dir=tmp_path / "out")
    assert report["summary"]["conformance_passed"] == 1
    assert report["summary"]["failure_probes"] == 1
    assert "q2" in report["summary"]["failure_probe_reasons"]
    assert report["summary"]["false_abstain"] == 1


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"question": "x"}', "missing case id"),
        ('{"id": "a", "question": "x", "mode": "sometimes"}', "unknown mode"),
        ('{"id": "a", "question": "x", "expected_status": "maybe"}', "expected_status"),
        ('{"id": "a", "question": "x", "grup": "g"}', "unknown keys 'grup'"),
        ('{"id": "a", "question": "x", "required_fact_ids": "daily"}', "must be a list of ids"),
        ('{"id": "a", "question": "x", "actor": {"tenant": "starship", "role": "admin"}}', "defines no role"),
    ],
)
def test_bad_case_files_are_clear_errors(demo_kb, tmp_path, line, message) -> None:
    cases = tmp_path / "bad.jsonl"
    cases.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(ValidationError, match=message):
        run_evaluation(demo_kb, cases_path=cases, out_dir=tmp_path / "out")


def test_postgresql_reports_are_byte_identical_to_the_default(two_runs, pg_url, tmp_path) -> None:
    """The demo in a PostgreSQL database: 20/20 and the very bytes the embedded default writes."""
    from veracity.index.embedders import DEFAULT_EMBEDDER, make_embedder
    from veracity.kb.directory import init_demo_kb, open_kb

    _, default, _ = two_runs
    init_demo_kb(pg_url, make_embedder(DEFAULT_EMBEDDER)).catalog.store.close()
    kb = open_kb(pg_url)
    try:
        report = run_evaluation(kb, out_dir=tmp_path)
    finally:
        kb.catalog.store.close()
    assert report["summary"]["conformance_passed"] == report["summary"]["conformance_cases"] == 20
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (default / name).read_bytes(), name


def test_a_forbidden_id_or_string_is_named_where_it_showed_and_the_askers_words_do_not_count(
    demo_kb, tmp_path
) -> None:
    lines = [
        {"id": "echo", "question": "3.2 支持量子加密登录吗？", "expected_status": "abstain",
         "params": {"forbid_strings": ["量子加密"]}},
        {"id": "cited", "question": "3.2 的 Team 能用 SAML 吗", "expected_status": "answer",
         "params": {"forbid_ids": ["faq-3.2-sso"]}},
    ]  # fmt: skip
    cases = tmp_path / "forbid.jsonl"
    cases.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    report = run_evaluation(demo_kb, cases_path=cases, out_dir=tmp_path / "out")
    assert case(report, "echo")["passed"] is True  # the question echoed back is the asker's own words
    failures = " ".join(case(report, "cited")["failures"])
    assert "forbidden ids or strings exposed ('faq-3.2-sso' in citations" in failures


def test_a_failed_case_says_which_layer_lost_each_relevant_document(demo_kb, tmp_path) -> None:
    public = {"tenant": "starship", "role": "public"}
    lines = [
        {"id": "hidden", "question": "3.2 的内部安全基线要求什么？", "actor": public,
         "expected_status": "answer", "relevant_document_ids": ["security-3.2-internal"]},
        {"id": "old", "question": "2.8 的 Team 能用 SAML 吗", "actor": public, "target_version": "3.2",
         "expected_status": "partial", "relevant_document_ids": ["faq-2.8-sso", "faq-3.2-sso"]},
    ]  # fmt: skip
    cases = tmp_path / "layers.jsonl"
    cases.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    report = run_evaluation(demo_kb, cases_path=cases, out_dir=tmp_path / "out")
    hidden = case(report, "hidden")["failures"]
    assert "relevant security-3.2-internal: excluded before scoring (role)" in hidden
    old = case(report, "old")["failures"]
    assert "relevant faq-2.8-sso: excluded before scoring (version, status)" in old
    assert not any("faq-3.2-sso" in note for note in old)  # cited: nothing lost


def test_a_case_of_a_tenant_the_knowledge_base_lacks_is_not_found(demo_kb, tmp_path) -> None:
    from veracity.model.errors import NotFoundError

    cases = tmp_path / "bad.jsonl"
    cases.write_text('{"id": "a", "question": "x", "actor": {"tenant": "nobody", "role": "public"}}\n')
    with pytest.raises(NotFoundError, match="case 'a': this knowledge base has no tenant 'nobody'"):
        run_evaluation(demo_kb, cases_path=cases, out_dir=tmp_path / "out")
