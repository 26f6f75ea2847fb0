"""Run evaluation cases against a knowledge base and write the reports.

Each case names a ``check``; ``CHECKS`` maps it to a function returning the
case result (plain data) and, for cases that ran the pipeline, its trace.
A failed ``conformance`` case fails the run; a ``failure_probe`` is reported
with its reason and never hidden.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..fixtures import fixture_cases_text, tenant_config
from ..model.errors import NotFoundError, ValidationError
from ..model.governance import eligibility
from ..pipeline.engine import Answer, Engine
from ..pipeline.render import answer_dict
from ..pipeline.trace import Audience
from . import offline
from .cases import Case, parse_cases
from .context import CaseOutput, Context
from .diagnosis import where_relevant_went
from .report import write_reports
from .scoring import (
    citation_scores,
    composition_scores,
    evidence_ranking,
    non_official_claims,
    retrieval_metrics,
    status_outcome,
    untrusted_in_context,
)


def _ask(kb: Engine, case: Case, **options: Any) -> Answer:
    assert case.question is not None
    return kb.ask(
        case.question,
        case.principal,
        case.target_version,
        case.as_of,
        required_fact_ids=case.required_fact_ids or None,
        **options,
    )


def _policy_violations(kb: Engine, case: Case, answer: Answer) -> int:
    """Chunks of documents the principal may not use, anywhere in candidates, evidence or citations."""
    snapshot = kb.snapshot
    assert snapshot is not None
    scope = case.scope(kb.catalog.roles(case.tenant))
    trace = answer.trace
    seen = {cid for _, pairs in trace.channels for cid, _ in pairs}
    seen |= {cid for cid, _ in trace.fused} | set(trace.final) | {c.chunk_id for c in answer.citations}
    violations = 0
    for chunk_id in sorted(seen):
        document = snapshot.documents[snapshot.chunks[chunk_id].document_id]
        if not eligibility(document, scope).eligible:
            violations += 1
    for citation in answer.citations:
        live = kb.catalog.resolve(citation.document_id, case.principal, case.target_version, case.as_of)
        if not live.eligible:
            violations += 1
    return violations


def instruction_sources(cases: Sequence[Case]) -> frozenset[str]:
    """Source ids the cases label as carrying instructions (``injection_document(s)`` params)."""
    labeled: set[str] = set()
    for case in cases:
        named = case.params.get("injection_document")
        labeled.update([named] if isinstance(named, str) else [])
        labeled.update(case.params.get("injection_documents", []))
    return frozenset(labeled)


def score_answer(
    kb: Engine, case: Case, answer: Answer, labeled: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The common result of a case that asked a question; ``labeled``: instruction-bearing sources."""
    snapshot = kb.snapshot
    assert snapshot is not None
    trace = answer.trace
    ranking = evidence_ranking(trace.final, snapshot.chunks, snapshot.documents)
    false_answer, false_abstain = status_outcome(answer.status, case.expected_status)
    failures: list[str] = []
    if case.expected_status is not None and answer.status is not case.expected_status:
        failures.append(f"status {answer.status.value}, expected {case.expected_status.value}")
    governance = {
        "filtered_before_score": trace.filtered_before_score,
        "excluded_by_reason": trace.excluded_counts,
        "policy_violation": _policy_violations(kb, case, answer),
        "catalog_recheck_rejected": len(
            {snapshot.chunks[cid].document_id for cid, _ in trace.gate_rejections}
        )
        + trace.gate_hidden,
        "untrusted_instruction_in_answer_context": untrusted_in_context(
            trace.final, snapshot.chunks, snapshot.documents, labeled | instruction_sources([case])
        ),
        "non_official_claims": non_official_claims(answer.claims, answer.citations, snapshot.documents),
        "quarantined": len(trace.quarantined),
    }
    if governance["policy_violation"]:
        failures.append(f"{governance['policy_violation']} policy violations")
    composition = composition_scores(trace)
    if governance["untrusted_instruction_in_answer_context"]:
        failures.append("instruction-bearing untrusted chunk in answer context")
    if failures and case.relevant_document_ids:  # say which layer lost what the case needed
        scope = case.scope(kb.catalog.roles(case.tenant))
        lost = where_relevant_went(
            case.relevant_document_ids, answer, snapshot.documents, snapshot.chunks_by_document, scope
        )
        failures.extend(lost)
    return {
        "status": answer.status.value,
        "evidence": ranking,
        "cited": sorted({c.source_id for c in answer.citations}),
        "missing_fact_ids": list(answer.missing_fact_ids),
        "uncovered_subquestions": len(answer.uncovered_subquestions),
        "false_answer": false_answer,
        "false_abstain": false_abstain,
        "metrics": {
            **retrieval_metrics(ranking, case.relevant_document_ids),
            **citation_scores(answer.claims, answer.citations, snapshot.chunks, case.required_fact_ids),
        },
        "governance": governance,
        "failures": failures,
        **({"composition": composition} if composition is not None else {}),
    }


def _expect_params(kb: Engine, case: Case, answer: Answer, result: dict[str, Any]) -> None:
    """Checks every ask-type case may request through ``params``."""
    params, failures = case.params, result["failures"]
    snapshot = kb.snapshot
    assert snapshot is not None
    if "allow_status" in params and answer.status.value not in params["allow_status"]:
        failures.append(f"status {answer.status.value} not in {params['allow_status']}")
    cited_facts = {f for claim in answer.claims for f in claim.fact_ids}
    for fact in [params["expect_cited_fact"]] if "expect_cited_fact" in params else []:
        if fact not in cited_facts:
            failures.append(f"fact {fact} not cited")
    for fact in params.get("expect_cited_facts", []):
        if fact not in cited_facts:
            failures.append(f"fact {fact} not cited")
    for source_id in params.get("allow_cited", []):
        if source_id not in result["cited"]:
            failures.append(f"{source_id} not cited")
    if "only_cited" in params:
        stray = sorted(set(result["cited"]) - set(params["only_cited"]))
        if stray:
            failures.append(f"cited outside {params['only_cited']}: {stray}")
    if params.get("expect_version_scope"):
        scoped = {r.split(":", 1)[1] for r in answer.reasons if r.startswith("version_scope:")}
        for citation in answer.citations:
            document = snapshot.documents[citation.document_id]
            bounded = document.version_min is not None or document.version_max is not None
            if (
                bounded
                and document.version_min != case.target_version
                and str(citation.citation_id) not in scoped
            ):
                failures.append(
                    f"citation {citation.citation_id} ({citation.source_id}) has no version scope"
                )
    if params.get("forbid_ids") or params.get("forbid_strings"):
        visible = answer_dict(answer, explain=True)
        expected_named = (
            set(params["expect_excluded"]) if isinstance(params.get("expect_excluded"), dict) else set()
        )
        visible["trace"]["excluded"] = [
            e for e in visible["trace"]["excluded"] if e["source_id"] not in expected_named
        ]
        for echoed in ("question", "uncovered_subquestions"):  # the asker's own words: no exposure
            visible.pop(echoed, None)
        parts = {name: json.dumps(value, ensure_ascii=False) for name, value in visible.items()}
        forbidden = [(text, text) for text in params.get("forbid_strings", [])]
        for source_id in params.get("forbid_ids", []):
            forbidden.append((source_id, source_id))
            for document in snapshot.documents.values():
                if document.source_id == source_id:
                    chunks = snapshot.chunks_by_document[document.document_id]
                    forbidden.extend((item, source_id) for item in (document.document_id, *chunks))
        seen = {  # each forbidden item (named as the case named it) → the parts that show it
            (item, shown): [name for name, text in parts.items() if item in text] for item, shown in forbidden
        }
        leaked = sorted(pair for pair, places in seen.items() if places)
        if leaked:
            where = sorted({name for pair in leaked for name in seen[pair]})
            shown_as = sorted({shown for _, shown in leaked})
            failures.append(
                f"{len(leaked)} forbidden ids or strings exposed ({', '.join(map(repr, shown_as))} in "
                f"{', '.join(where)}; a document the case expects excluded belongs in expect_excluded)"
            )
        result["governance"]["forbidden_exposed"] = len(leaked)
    if isinstance(params.get("expect_excluded"), dict):
        named = {sid: reason for sid, _, reason in answer.trace.excluded}
        for source_id, reason in params["expect_excluded"].items():
            if named.get(source_id) != reason:
                failures.append(f"{source_id} not excluded for {reason}")
    if (
        "expect_excluded_by_reason" in params
        and answer.trace.excluded_counts != params["expect_excluded_by_reason"]
    ):
        failures.append(f"excluded {answer.trace.excluded_counts}")
    if "expect_eligible" in params and answer.trace.eligible_documents != params["expect_eligible"]:
        failures.append(f"{answer.trace.eligible_documents} eligible documents")
    if "expect_excluded" in params and isinstance(params["expect_excluded"], int):
        if answer.trace.filtered_before_score != params["expect_excluded"]:
            failures.append(f"{answer.trace.filtered_before_score} filtered before score")


def check_ask(ctx: Context, case: Case) -> CaseOutput:
    """Ask the case's question as its actor and compare with the expectation."""
    answer = _ask(ctx.kb, case)
    result = score_answer(ctx.kb, case, answer, ctx.instruction_sources)
    _expect_params(ctx.kb, case, answer, result)
    return result, answer.trace.to_dict(timings=False, audience=Audience.OPERATOR)


def check_retrieval(ctx: Context, case: Case) -> CaseOutput:
    """Ranking quality of the governed evidence (after gate and quarantine)."""
    answer = _ask(ctx.kb, case)
    result = score_answer(ctx.kb, case, answer, ctx.instruction_sources)
    params, metrics, failures = case.params, result["metrics"], result["failures"]
    k = int(params.get("k", 3))
    metrics[f"recall@{k}"] = retrieval_metrics(result["evidence"], case.relevant_document_ids).get(
        f"recall@{k}"
    )
    if "expect_rr" in params and metrics["rr"] != params["expect_rr"]:
        failures.append(f"RR {metrics['rr']}, expected {params['expect_rr']}")
    if "expect_recall" in params and metrics[f"recall@{k}"] != params["expect_recall"]:
        failures.append(f"Recall@{k} {metrics[f'recall@{k}']}, expected {params['expect_recall']}")
    if "expect_first_kind" in params:
        snapshot = ctx.kb.snapshot
        assert snapshot is not None
        first = snapshot.chunks[answer.trace.final[0]].kind.value if answer.trace.final else None
        result["first_kind"] = first
        if first != params["expect_first_kind"]:
            failures.append(f"first chunk kind {first}, expected {params['expect_first_kind']}")
    return result, answer.trace.to_dict(timings=False, audience=Audience.OPERATOR)


def check_stale_index(ctx: Context, case: Case) -> CaseOutput:
    """Change the catalog after the index was built; the return gate must catch it."""
    source_id = str(case.params.get("withdraw") or case.params.get("edit") or "")
    outcomes = []
    traces = []
    for variant in ("withdraw", "new_revision"):
        kb = ctx.fork()
        document = kb.catalog.document(source_id)
        if variant == "withdraw":
            kb.catalog.withdraw(document.document_id)
        else:
            offline.publish_edited_revision(kb.catalog, document)
        answer = _ask(kb, case)
        result = score_answer(kb, case, answer, ctx.instruction_sources)
        _expect_params(kb, case, answer, result)
        rechecks = result["governance"]["catalog_recheck_rejected"]
        if rechecks != case.params.get("expect_rechecks", 1):
            result["failures"].append(f"{variant}: {rechecks} return-gate rejections")
        if source_id in result["cited"]:
            result["failures"].append(f"{variant}: cited the changed document")
        result["variant"] = variant
        outcomes.append(result)
        traces.append(answer.trace.to_dict(timings=False, audience=Audience.OPERATOR))
    merged = dict(outcomes[0])
    merged["failures"] = [f for o in outcomes for f in o["failures"]]
    merged["variants"] = {
        o["variant"]: {
            "status": o["status"],
            "catalog_recheck_rejected": o["governance"]["catalog_recheck_rejected"],
        }
        for o in outcomes
    }
    return merged, {"variants": traces}


def check_drop_chunk(ctx: Context, case: Case) -> CaseOutput:
    """Remove one chunk (by document and heading) from the evidence; expect a partial answer."""
    snapshot = ctx.kb.snapshot
    assert snapshot is not None
    document = ctx.kb.catalog.document(case.params["document"])
    heading = case.params["drop_heading"]
    dropped = [c.chunk_id for c in ctx.kb.catalog.chunks(document.document_id) if heading in c.heading_path]
    answer = _ask(ctx.kb, case, remove_chunk_ids=dropped)
    result = score_answer(ctx.kb, case, answer, ctx.instruction_sources)
    _expect_params(ctx.kb, case, answer, result)
    missing = case.params.get("expect_missing", [])
    if list(answer.missing_fact_ids) != missing:
        result["failures"].append(f"missing {list(answer.missing_fact_ids)}, expected {missing}")
    if any(set(missing) & set(claim.fact_ids) for claim in answer.claims):
        result["failures"].append("a claim speaks about a missing fact")
    if any(c.chunk_id in dropped for c in answer.citations):
        result["failures"].append("cited a removed chunk")
    return result, answer.trace.to_dict(timings=False, audience=Audience.OPERATOR)


def check_injection(ctx: Context, case: Case) -> CaseOutput:
    """The injection page may be a candidate but never answer context; nothing about the query changes."""
    snapshot = ctx.kb.snapshot
    assert snapshot is not None
    answer = _ask(ctx.kb, case)
    result = score_answer(ctx.kb, case, answer, ctx.instruction_sources)
    _expect_params(ctx.kb, case, answer, result)
    injected = {
        cid
        for did, cids in snapshot.chunks_by_document.items()
        if snapshot.documents[did].source_id == case.params["injection_document"]
        for cid in cids
    }
    candidates = {cid for cid, _ in answer.trace.fused}
    quarantined = {cid for cid, _ in answer.trace.quarantined}
    result["injection_candidate"] = bool(injected & candidates)
    if injected & set(answer.trace.final):
        result["failures"].append("injection chunk entered the answer context")
    if injected & candidates and not injected & candidates <= quarantined:
        result["failures"].append("injection candidate was not quarantined")
    if not injected & candidates:
        result["failures"].append("injection page was not a candidate: the check did not exercise quarantine")
    trace = answer.trace
    unchanged = (
        trace.tenant == case.tenant
        and trace.roles == (case.role,)
        and trace.target_version == case.target_version
        and set(answer.missing_fact_ids) <= set(case.required_fact_ids)
    )
    if not unchanged:
        result["failures"].append("actor, roles or required facts changed")
    return result, answer.trace.to_dict(timings=False, audience=Audience.OPERATOR)


CHECKS: dict[str, Callable[[Context, Case], CaseOutput]] = {
    "ask": check_ask,
    "retrieval": check_retrieval,
    "stale_index": check_stale_index,
    "evidence_drop_chunk": check_drop_chunk,
    "injection": check_injection,
    "baseline_v0": offline.check_baseline_v0,
    "baseline_v1": offline.check_baseline_v1,
    "chunk_fixed": offline.check_chunk_fixed,
    "chunk_structural": offline.check_chunk_structural,
    "chunk_contextual": offline.check_chunk_contextual,
    "citation_mapping": offline.check_citation_mapping,
}


def run_case(ctx: Context, case: Case) -> CaseOutput:
    """Run one case; an unknown check is an error naming the valid ones."""
    check = CHECKS.get(case.check)
    if check is None:
        from ..model.errors import ConfigError

        raise ConfigError(
            f"case {case.case_id!r}: unknown check {case.check!r}; valid: {', '.join(sorted(CHECKS))}"
        )
    result, trace = check(ctx, case)
    passed = not result["failures"]
    header = {
        "id": case.case_id,
        "group": case.group,
        "check": case.check,
        "mode": case.mode,
        "expected_status": case.expected_status.value if case.expected_status else None,
        "passed": passed,
        "expectation": case.expectation,
    }
    return {**header, **result}, trace


def _check_askers(kb: Engine, cases: Sequence[Case]) -> None:
    """``ValidationError`` for a case whose asker this knowledge base does not define, as ``ask``
    refuses it: a typo in a role would otherwise run and abstain, and a case that names no actor
    takes the bundled demo's (tenant ``starship``), which another knowledge base lacks."""
    for case in cases:
        if case.question is None:
            continue  # a chunking check asks nothing
        roles = kb.catalog.roles(case.tenant)
        if not roles:  # not found: for the demo's own cases the command adds what to do
            raise NotFoundError(
                f"case {case.case_id!r}: this knowledge base has no tenant {case.tenant!r} (a case "
                "without an actor takes the demo's); give actor.tenant and actor.role"
            )
        if case.role not in roles:
            raise ValidationError(
                f"tenant {case.tenant!r} defines no role {case.role!r}; its roles: "
                + ", ".join(sorted(roles)),
                document=case.case_id,
                field="actor",
            )


def run_evaluation(kb: Engine, *, cases_path: Path | None = None, out_dir: Path) -> dict[str, Any]:
    """Run every case, write the three reports into ``out_dir``, return the report."""
    config = tenant_config()
    text = cases_path.read_text(encoding="utf-8") if cases_path else fixture_cases_text()
    cases = parse_cases(text, config, source=str(cases_path or "starship/cases.jsonl"))
    _check_askers(kb, cases)
    ctx = Context(kb, instruction_sources(cases))
    results: list[dict[str, Any]] = []
    traces: list[dict[str, Any]] = []
    for case in cases:
        result, trace = run_case(ctx, case)
        results.append(result)
        if trace is not None:
            traces.append({"case_id": case.case_id, "trace": trace})
    return write_reports(kb, cases, results, traces, out_dir)
