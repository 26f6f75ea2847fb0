"""Report writers: canonical JSON, a Markdown table, and a JSONL trace.

Same inputs, byte-identical files: sorted keys, floats rounded to 4 places,
no timings, no dates, and ids rather than text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..model.contracts import replace_file

if TYPE_CHECKING:
    from ..pipeline.engine import Engine
    from .cases import Case

PLACES = 4
"""Decimal places of every number in an evaluation report (byte-identical reports across runs)."""
AGGREGATED = (
    "precision@3",
    "recall@3",
    "rr",
    "ndcg@5",
    "citation_precision",
    "citation_recall",
    "supported_claim_ratio",
    "supported_fact_ratio",
)
GOVERNANCE = (
    "filtered_before_score",
    "policy_violation",
    "catalog_recheck_rejected",
    "untrusted_instruction_in_answer_context",
    "non_official_claims",
)


def rounded(value: Any) -> Any:
    """Round every float inside ``value`` to ``PLACES`` (recursively)."""
    if isinstance(value, float):
        return round(value, PLACES)
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v) for v in value]
    return value


def mean_defined(values: Sequence[float | None]) -> float | None:
    """Mean of the defined values; null when none is defined (never 0)."""
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def summarize(
    results: list[dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """``(summary, aggregate metrics, governance totals)`` over the case results."""
    conformance = [r for r in results if r["mode"] == "conformance"]
    probes = [r for r in results if r["mode"] == "failure_probe"]
    summary = {
        "cases": len(results),
        "conformance_cases": len(conformance),
        "conformance_passed": sum(r["passed"] for r in conformance),
        "failure_probes": len(probes),
        "failure_probes_now_passing": sorted(r["id"] for r in probes if r["passed"]),
        "false_answer": sum(bool(r.get("false_answer")) for r in results),
        "false_abstain": sum(bool(r.get("false_abstain")) for r in results),
        "failed_case_ids": sorted(r["id"] for r in conformance if not r["passed"]),
        "failure_probe_reasons": {r["id"]: r["failures"] for r in probes if not r["passed"]},
    }
    answered = [r for r in results if "governance" in r]
    metrics: dict[str, Any] = {
        name: mean_defined([r["metrics"].get(name) for r in answered]) for name in AGGREGATED
    }
    metrics["unsupported_claims"] = sum(r["metrics"].get("unsupported_claims", 0) for r in answered)
    governance = {name: sum(r["governance"][name] for r in answered) for name in GOVERNANCE}
    written = [r["composition"] for r in results if "composition" in r]
    if written:  # only a written (llm) run has this block: extractive reports are unchanged
        from .scoring import composition_summary

        metrics["composition"] = composition_summary(written)
    return summary, metrics, governance


def _markdown(report: dict[str, Any]) -> str:
    summary, scope = report["summary"], report["scope"]
    lines = [
        "# veracity evaluation",
        "",
        f"Scope: {scope['documents']} documents, {scope['cases']} cases, encoder `{scope['encoder']}`, "
        f"reranker `{scope['reranker']}`, network {str(scope['network']).lower()}.",
        "",
        f"Conformance: **{summary['conformance_passed']}/{summary['conformance_cases']}** passed; "
        f"failure probes: {summary['failure_probes']}; false answers: {summary['false_answer']}; "
        f"false abstains: {summary['false_abstain']}.",
        "",
        "| case | group | mode | expected | got | pass | P@3 | R@3 | RR "
        "| cit. P | cit. R | supported | notes |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def cell(value: Any) -> str:
        if value is None:
            return "–"
        if isinstance(value, float):
            return f"{value:.{PLACES}f}".rstrip("0").rstrip(".") if value % 1 else f"{value:.1f}"
        return str(value)

    for r in report["cases"]:
        m = r["metrics"]
        lines.append(
            "| "
            + " | ".join(
                [
                    r["id"],
                    r["group"],
                    r["mode"],
                    cell(r["expected_status"]),
                    cell(r.get("status")),
                    "yes" if r["passed"] else "**no**",
                    cell(m.get("precision@3")),
                    cell(m.get("recall@3")),
                    cell(m.get("rr")),
                    cell(m.get("citation_precision")),
                    cell(m.get("citation_recall")),
                    cell(m.get("supported_claim_ratio")),
                    "; ".join(r["failures"]) or "",
                ]
            )
            + " |"
        )
    lines += ["", "## Aggregates (mean over cases where defined; – = undefined)", ""]
    lines += [
        f"- {name}: {cell(value)}" for name, value in report["metrics"].items() if name != "composition"
    ]
    if "composition" in report["metrics"]:
        lines += ["", "## Written claims (llm composer)", ""]
        lines += [f"- {name}: {cell(value)}" for name, value in report["metrics"]["composition"].items()]
    lines += ["", "## Governance", ""]
    lines += [f"- {name}: {value}" for name, value in report["governance"].items()]
    lines += ["", "## Not measured", ""]
    lines += [f"- {name}: {cell(value)}" for name, value in report["unmeasured"].items()]
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str) -> None:
    replace_file(path, text.encode("utf-8"))  # bytes: "\n" on every platform


def write_reports(
    kb: Engine,
    cases: Sequence[Case],
    results: list[dict[str, Any]],
    traces: list[dict[str, Any]],
    out_dir: Path,
) -> dict[str, Any]:
    """Write rag-evidence.json / .md and rag-trace.jsonl; return the report."""
    summary, metrics, governance = summarize(results)
    snapshot = kb.snapshot
    baselines = {r["check"]: r["metrics"] for r in results if r["check"].startswith("baseline")}
    report = rounded(
        {
            "scope": {
                "veracity": __version__,
                "documents": len(snapshot.documents) if snapshot else 0,
                "chunks": len(snapshot.chunks) if snapshot else 0,
                "cases": len(cases),
                "encoder": kb.embedder.model_id,
                "reranker": kb.reranker.name,
                "network": False,
            },
            "summary": summary,
            "metrics": metrics,
            "governance": governance,
            "baselines": {
                "v0_no_retrieval": baselines.get("baseline_v0"),
                "v1_all_documents": baselines.get("baseline_v1"),
            },
            "unmeasured": {
                "answer_fluency": None,
                "human_judged_faithfulness": None,
                "latency_ms": None,
                "llm_judge_agreement": None,
            },
            "cases": results,
        }
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    _write(
        out_dir / "rag-evidence.json",
        json.dumps(report, ensure_ascii=False, sort_keys=True, indent=2) + "\n",
    )
    _write(out_dir / "rag-evidence.md", _markdown(report))
    _write(
        out_dir / "rag-trace.jsonl",
        "".join(json.dumps(rounded(t), ensure_ascii=False, sort_keys=True) + "\n" for t in traces),
    )
    return report
