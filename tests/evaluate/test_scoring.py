"""Governance counts come from trust and the cases' labels, never from the detector under test."""

from __future__ import annotations

import veracity.pipeline.evidence as evidence
from veracity.evaluate.cases import parse_cases
from veracity.evaluate.runner import instruction_sources, score_answer
from veracity.evaluate.scoring import non_official_claims
from veracity.fixtures import fixture_cases_text
from veracity.model.contracts import Claim
from veracity.pipeline.evidence import make_citation


def injection_case(config):
    cases = parse_cases(fixture_cases_text(), config)
    return cases, next(c for c in cases if c.check == "injection")


def ask(kb, case):
    return kb.ask(case.question, case.principal, case.target_version, case.as_of,
                  required_fact_ids=case.required_fact_ids)  # fmt: skip


def test_cases_label_the_instruction_bearing_page(config) -> None:
    cases, _ = injection_case(config)
    assert instruction_sources(cases) == frozenset({"community-qa-injection"})


def test_a_detector_that_misses_the_attack_is_caught_by_the_metric(fake_kb, config, monkeypatch) -> None:
    cases, case = injection_case(config)
    labeled = instruction_sources(cases)
    guarded = score_answer(fake_kb, case, ask(fake_kb, case), labeled)["governance"]
    assert guarded["untrusted_instruction_in_answer_context"] == 0
    monkeypatch.setattr(evidence, "hold_back", lambda chunk, document: ())  # a blind detector
    blind = score_answer(fake_kb, case, ask(fake_kb, case), labeled)["governance"]
    assert blind["untrusted_instruction_in_answer_context"] > 0


def test_non_official_claims_count_claims_citing_a_source_that_is_not_official(fake_kb) -> None:
    documents = {d.document_id: d for d in fake_kb.catalog.documents()}
    official = next(d for d in documents.values() if d.trust.value == "official")
    community = next(d for d in documents.values() if d.trust.value == "community")
    chunk_of = {d.document_id: fake_kb.catalog.chunks(d.document_id)[0] for d in (official, community)}
    citations = [
        make_citation(1, chunk_of[official.document_id], official),
        make_citation(2, chunk_of[community.document_id], community),
    ]
    claims = [
        Claim(text="a", citation_ids=(1,)),
        Claim(text="b", citation_ids=(2,)),
        Claim(text="c", citation_ids=(1, 2)),
    ]
    assert non_official_claims(claims, citations, documents) == 2
    assert non_official_claims(claims[:1], citations, documents) == 0
