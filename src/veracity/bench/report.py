"""Render benchmark reports: canonical JSON and Markdown tables."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

COLUMNS = (
    ("nDCG@10", "ndcg@10"),
    ("R@5", "recall@5"),
    ("R@10", "recall@10"),
    ("R@100", "recall@100"),
    ("MRR@10", "mrr@10"),
)


def canonical_json(data: Any) -> str:
    """Sorted keys, 2-space indent, UTF-8 text, no NaN, trailing newline."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2, allow_nan=False) + "\n"


def _num(value: float | None, places: int = 4) -> str:
    return "–" if value is None else f"{value:.{places}f}"


def table_rows(report: Mapping[str, Any]) -> list[dict[str, str]]:
    """One row of strings per channel of ``report``."""
    embedder = report.get("embedder") or {}
    rows = []
    for channel, entry in report["channels"].items():
        metrics = entry["metrics"]
        latency = entry["latency_ms"]
        embed = entry.get("query_embed_ms")
        row = {
            "dataset": f"{report['dataset']['name']} {report['dataset']['split']}",
            "embedder": embedder.get("name", "–") if channel != "bm25" else "–",
            "channel": channel,
        }
        row.update({header: _num(metrics.get(key)) for header, key in COLUMNS})
        row["build s"] = f"{entry['build_s']:.1f}" + (" (cached)" if entry.get("embed_cached") else "")
        row["query ms p50/p95"] = f"{latency['p50']:.1f} / {latency['p95']:.1f}"
        row["+embed ms p50/p95"] = f"{embed['p50']:.1f} / {embed['p95']:.1f}" if embed else "–"
        rows.append(row)
    return rows


def markdown_table(reports: Iterable[Mapping[str, Any]]) -> str:
    """A Markdown table with one row per (report, channel)."""
    rows = [row for report in reports for row in table_rows(report)]
    if not rows:
        return ""
    headers = list(rows[0])
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row[h] for h in headers) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def summary_lines(report: Mapping[str, Any]) -> list[str]:
    """Short lines on what was tuned and chosen, for the console."""
    settings = report["settings"]
    bm25 = settings["bm25"]
    lines = [
        f"dataset {report['dataset']['name']} {report['dataset']['split']}: "
        f"{report['dataset']['documents']} docs, {report['dataset']['queries_evaluated']} queries; "
        f"analyzer {report['analyzer']}; BM25 k1={bm25['k1']} b={bm25['b']}",
    ]
    tuning = report.get("tuning")
    if tuning:
        lines.append(f"tuned on {tuning['source']} ({tuning['queries']} queries), never on evaluated queries")
    else:
        lines.append("no tuning split: defaults (Anserini BM25, RerankWeights())")
    if "hybrid+rerank" in report["channels"]:
        w = settings["rerank_weights"]
        lines.append("rerank weights " + " ".join(f"{k}={v}" for k, v in sorted(w.items())))
    return lines
