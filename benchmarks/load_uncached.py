"""Engine traffic for ``load_service.py``: distinct questions (cache misses), then the same again (hits).

What a person waits for when the answer is not cached: each question is
asked once, by clients that take the next unasked question from a shared
list, so every request is a miss; then the same questions again (every
request a hit). Right before each cell's misses, the same process opens the
knowledge base directly and answers that cell's questions one after another,
with no cache (the servers idle meanwhile): the sequential ask rate the cell's
throughputs are divided by. Measured next to each cell, the reference sees the
machine as the cell does (on shared cores one reference taken minutes earlier
moved the ratio by ±0.2).

Questions come from ``--questions`` (a BEIR ``queries.jsonl`` or a text file,
one per line); by default CMRC 2018 dev's (``../shared/datasets``), else the
bundled demo's case questions. Questions about other subjects than the demo
still run every stage (recall, rerank, the return gate, evidence, the
decision); most of them abstain, as such questions should.
"""

from __future__ import annotations

import http.client
import json
import statistics
import threading
import time
import urllib.parse
from collections.abc import Sequence
from pathlib import Path

from veracity.service.core.gateway import Gateway, GatewaySettings
from veracity.service.core.rate_limits import RateLimit

RECONNECT_EVERY = 20
SHARED_QUESTIONS = Path(__file__).resolve().parents[2] / "shared/datasets/cmrc2018/beir/dev/queries.jsonl"


def load_questions(path: Path | None) -> tuple[list[str], str]:
    """Distinct questions in file order, and where they came from."""
    if path is None and SHARED_QUESTIONS.is_file():
        path = SHARED_QUESTIONS
    if path is None:
        from veracity.fixtures import fixture_cases

        found = [str(c["question"]) for c in fixture_cases() if c.get("question")]
        source = "the demo's case questions"
    else:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        found = [
            str(json.loads(line)["text"]) if line.lstrip().startswith("{") else line.strip() for line in lines
        ]
        source = str(path)
    return list(dict.fromkeys(q for q in found if q.strip())), source


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile (``share`` in 0..1)."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))]


def sequential_rate(folder: Path | str, key: str, questions: Sequence[str]) -> dict[str, float]:
    """Answers per second asking ``questions`` one after another in this process, no cache."""
    gate = Gateway.open(
        folder, settings=GatewaySettings(cache_entries=0, shared=False, rate_limit=RateLimit(per_minute=0))
    )
    try:
        caller = gate.admit(key)
        gate.ask(caller, "warm-up: 3.2 的 Team 能用 SAML 吗")
        times = []
        for question in questions:
            started = time.perf_counter()
            gate.ask(caller, question)
            times.append((time.perf_counter() - started) * 1000)
    finally:
        gate.close()
    return {
        "questions": len(times),
        "per_s": round(len(times) / (sum(times) / 1000), 2),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(percentile(times, 0.95), 1),
    }


def drive(base: str, key: str, questions: Sequence[str], clients: int, timeout_s: float) -> dict[str, object]:
    """``clients`` threads asking ``questions`` once each (the next unasked one), as fast as answered.

    Each client keeps a connection for :data:`RECONNECT_EVERY` requests, then opens another,
    as many users would (the kernel hands each new connection to one worker: a few connections
    kept for ever would leave the workers' shares to chance). Clients use the standard
    library's ``http.client``, which costs the shared cores little, so the figures are the
    server's; the clients' CPU share is reported.
    """
    pending = list(reversed(questions))
    lock = threading.Lock()
    samples: list[tuple[float, str, int]] = []  # ms, cache, status
    address = urllib.parse.urlsplit(base)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def client() -> None:
        host, port = address.hostname or "127.0.0.1", address.port
        connection = http.client.HTTPConnection(host, port, timeout=timeout_s)
        asked = 0
        try:
            while True:
                with lock:
                    if not pending:
                        return
                    question = pending.pop()
                body = json.dumps({"question": question}, ensure_ascii=False).encode("utf-8")
                sent = time.perf_counter()
                try:
                    connection.request("POST", "/v1/ask", body=body, headers=headers)
                    response = connection.getresponse()
                    data = response.read()
                    status = response.status
                    cache = json.loads(data).get("cache", "") if status == 200 else ""
                except (OSError, http.client.HTTPException):
                    connection.close()  # reconnects on the next request
                    status, cache = 0, ""
                with lock:
                    samples.append(((time.perf_counter() - sent) * 1000, cache, status))
                asked += 1
                if asked % RECONNECT_EVERY == 0:
                    connection.close()  # http.client connects again on the next request
        finally:
            connection.close()

    start, cpu = time.perf_counter(), time.process_time()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    ok = [ms for ms, _, status in samples if status == 200]
    return {
        "clients": clients,
        "requests": len(samples),
        "errors": sum(status != 200 for _, _, status in samples),
        "hits": sum(cache == "hit" for _, cache, _ in samples),
        "per_s": round(len(samples) / elapsed, 2),
        "p50_ms": round(percentile(ok, 0.5), 1) if ok else None,
        "p95_ms": round(percentile(ok, 0.95), 1) if ok else None,
        "p99_ms": round(percentile(ok, 0.99), 1) if ok else None,
        "client_cpu_share": round(cpu / elapsed, 2),  # of one core, taken by these client threads
    }


def engine_table(report: dict[str, object]) -> str:
    """The miss and hit rows of every cell, each throughput also as a ratio to its cell's sequential rate."""
    reference = report["sequential"]
    assert isinstance(reference, dict)
    lines = [
        f"{report.get('backend', 'sqlite')}; questions: {report['questions_source']}; "
        f"embedder {report['embedder']}; threads a worker {report.get('threads_per_worker')}; "
        f"sequential reference in this process, no cache, measured before each cell: "
        f"{reference['questions']} questions in all, {reference['per_s']}/s pooled",
        "",
        "| workers | clients | traffic | requests | errors | hits | throughput /s | sequential /s "
        "| × sequential | p50 ms | p95 ms | p99 ms | p95 / p50 | clients' CPU (cores) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    cells = report["cells"]
    assert isinstance(cells, list)
    for cell in cells:
        rate = float(cell["sequential"]["per_s"])
        for traffic in ("miss", "hit"):
            row = cell[traffic]
            ratio = f"{row['per_s'] / rate:.2f}" if rate else "—"
            spread = f"{row['p95_ms'] / row['p50_ms']:.2f}" if row["p50_ms"] else "—"
            lines.append(
                f"| {cell['workers']} | {row['clients']} | {traffic} | {row['requests']} | {row['errors']} "
                f"| {row['hits']} | {row['per_s']} | {rate} | {ratio} | {row['p50_ms']} | {row['p95_ms']} "
                f"| {row['p99_ms']} | {spread} | {row['client_cpu_share']} |"
            )
    return "\n".join(lines)
