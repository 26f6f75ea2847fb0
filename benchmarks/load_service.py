"""Load on loopback: concurrent clients asking a running ``veracity serve``.

Two kinds of traffic (``--traffic``):

- ``engine`` (default): what the engine serves when nothing is cached. For
  each ``--workers`` count a server is started; for each ``--clients`` count,
  ``--per-cell`` distinct questions are asked once each (every request a
  miss), then the same questions again ``--hit-rounds`` times (every
  request a hit: 200 hits take well under a second, too short a window to
  time a rate on a shared machine). Right before each cell, this process
  answers the cell's questions one after another with no cache: the
  sequential rate the cell's throughputs are divided by (:mod:`load_uncached`).
- ``mixed``: a fixed mix of keys and questions (the demo's running question,
  shorter ones, one only a maintainer may see, the second tenant's), asked
  for ``--seconds``, with a withdraw of ``faq-3.2-sso`` halfway: it prints
  p50/p95/p99, errors, the cache hit rate, hit and miss latency, throughput,
  and checks that no answer to a request sent after the withdraw's response
  cites the withdrawn document (exit status 1 on any error or such citation).

Bounded: every request has a timeout, servers are stopped at the end. Only
127.0.0.1 is contacted. The knowledge base is the demo plus tenant acme
(:func:`veracity.testing.tenants.build_served_kb`) in a temporary folder.

    python benchmarks/load_service.py --clients 1,4,20 --workers 1,2,4 --per-cell 200
    python benchmarks/load_service.py --traffic mixed --clients 20 --seconds 30 --workers 2
    python benchmarks/load_service.py --traffic mixed --clients 4 --seconds 5 --embedder fake  # smoke
    python benchmarks/load_service.py --traffic mixed --kb postgresql://…/empty  # PostgreSQL, reader role
    python benchmarks/load_service.py --clients 1,4,16 --workers 1,2 --kb postgresql://…/empty

With ``--kb`` (an empty PostgreSQL database) the servers serve it through a
reader role (row-level security), and their workers share the answer cache
and rate limits in that database (``serving_answers``, emptied before each
server starts, as the side file is for a directory).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from load_uncached import drive, engine_table, load_questions, percentile, sequential_rate

from veracity.index.embedders import make_embedder
from veracity.kb.backends import READER_URL_ENV
from veracity.service.core.shared import SERVING_FILE
from veracity.testing.tenants import ServedKeys, build_served_kb

WITHDRAWN = "faq-3.2-sso"
RUNNING = (
    "我们正在使用 2.8 的 Team 计划和旧 SAML 单点登录。升级到 3.2 后，还能继续使用 SAML 吗？"
    "如果成员数超过新计划上限，多出来的成员会被自动删除吗？"
)


def mix(keys: ServedKeys) -> list[tuple[str, str, dict[str, object]]]:
    """(label, key, body): the asks the clients draw from."""
    return [
        ("running/public", keys.public, {"question": RUNNING}),
        ("running/maintainer", keys.maintainer, {"question": RUNNING}),
        ("team-saml/public", keys.public, {"question": "3.2 的 Team 能用 SAML 吗"}),
        ("team-saml/3.2/public", keys.public, {"question": "3.2 的 Team 能用 SAML 吗", "version": "3.2"}),
        ("members/public", keys.public, {"question": "成员数超过新计划上限会怎样？"}),
        ("incident/public", keys.public, {"question": "2026 年 8 月的 SSO 故障是怎么回事？"}),
        ("incident/maintainer", keys.maintainer, {"question": "2026 年 8 月的 SSO 故障是怎么回事？"}),
        ("quantum/public", keys.public, {"question": "3.2 支持量子加密登录吗？"}),
        ("acme-returns/public", keys.acme_public, {"question": "购买后多少天内可以退货？"}),
        ("acme-payroll/staff", keys.acme_staff, {"question": "Which day does Acme pay salaries?"}),
    ]


@dataclass
class Sample:
    """One request as a client saw it."""

    label: str
    sent: float
    done: float
    status: int
    cache: str = ""
    cited: list[str] = field(default_factory=list)
    error: str = ""

    @property
    def ms(self) -> float:
        """Latency in milliseconds."""
        return (self.done - self.sent) * 1000


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start(
    folder: Path | str, workers: int, reader_url: str | None = None, threads: int = 2
) -> tuple[subprocess.Popen[str], str]:
    port = _free_port()
    command = [sys.executable, "-m", "veracity.cli.main", "serve", "--kb", str(folder), "--port", str(port),
               "--workers", str(workers), "--threads", str(threads), "--rate-limit", "0"]  # fmt: skip
    env = {**os.environ, "VERACITY_READER_URL": reader_url} if reader_url else None
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                return process, base
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    process.kill()
    raise SystemExit(f"the server did not become ready: {process.stderr.read() if process.stderr else ''}")


RECONNECT_EVERY = 20
"""Requests per connection: clients reconnect now and then, as many users would, so the kernel
spreads connections over the workers (one keep-alive connection would stay on one worker)."""


def _client(base: str, asks: list[tuple[str, str, dict[str, object]]], seed: int, deadline: float,
            samples: list[Sample], lock: threading.Lock) -> None:  # fmt: skip
    chooser = random.Random(seed)
    while time.monotonic() < deadline:
        with httpx.Client(base_url=base, timeout=60) as http:
            for _ in range(RECONNECT_EVERY):
                if time.monotonic() >= deadline:
                    break
                label, key, body = chooser.choice(asks)
                sent = time.monotonic()
                try:
                    response = http.post("/v1/ask", json=body, headers={"Authorization": f"Bearer {key}"})
                    done = time.monotonic()
                    data = response.json() if response.status_code == 200 else {}
                    sample = Sample(
                        label, sent, done, response.status_code, data.get("cache", ""),
                        [c["source_id"] for c in data.get("citations", [])],
                        "" if response.status_code == 200 else response.text[:200],
                    )  # fmt: skip
                except httpx.HTTPError as exc:
                    sample = Sample(label, sent, time.monotonic(), 0, error=f"{type(exc).__name__}: {exc}")
                with lock:
                    samples.append(sample)


def worker_caches(
    base: str, operator: str, workers: int, patience: float = 60.0
) -> dict[int, dict[str, object]]:
    """Each worker's own cache counts (``/v1/status`` on fresh connections until every worker answered)."""
    found: dict[int, dict[str, object]] = {}
    deadline = time.monotonic() + patience
    while len(found) < workers and time.monotonic() < deadline:
        headers = {"Authorization": f"Bearer {operator}", "Connection": "close"}
        response = httpx.get(f"{base}/v1/status", timeout=60, headers=headers)
        if response.status_code == 200:
            data = response.json()
            found[int(data["process"])] = data["cache"]
        else:
            time.sleep(0.2)
    return found


def run(
    clients: int, seconds: float, workers: int, embedder: str, seed: int = 0, kb: str | None = None
) -> dict[str, object]:
    """Run the load and return the measured report.

    ``kb``: an empty PostgreSQL database to serve from (through a reader role: row-level
    security), instead of a temporary directory.
    """
    with tempfile.TemporaryDirectory(prefix="veracity-load-") as tmp:
        folder: Path | str = Path(tmp) / "kb" if kb is None else kb
        keys = build_served_kb(folder, make_embedder(embedder), sources=Path(tmp) / "acme")
        reader = None
        if kb is not None:
            from veracity.catalog.postgres.roles import create_reader

            reader = create_reader(kb, "load_asker")
        process, base = _start(folder, workers, reader)
        try:
            worker_caches(base, keys.operator, workers)  # every worker is up before the clients start
            asks = mix(keys)
            samples: list[Sample] = []
            lock = threading.Lock()
            start = time.monotonic()
            deadline = start + seconds
            threads = [
                threading.Thread(target=_client, args=(base, asks, seed + i, deadline, samples, lock))
                for i in range(clients)
            ]
            for thread in threads:
                thread.start()
            time.sleep(seconds / 2)
            withdraw_sent = time.monotonic()
            withdrawn = httpx.post(f"{base}/v1/documents/{WITHDRAWN}/withdraw", timeout=60,
                                   headers={"Authorization": f"Bearer {keys.operator}"})  # fmt: skip
            withdraw_done = time.monotonic()
            for thread in threads:
                thread.join(timeout=seconds + 90)
            elapsed = time.monotonic() - start
            caches = worker_caches(base, keys.operator, workers)  # the server's own view, per worker
        finally:
            _stop(process)
    ok = [s for s in samples if s.status == 200]
    errors = [s for s in samples if s.status != 200]
    hits = [s for s in ok if s.cache == "hit"]
    misses = [s for s in ok if s.cache != "hit"]
    after = [s for s in ok if s.sent > withdraw_done]
    stale = [s for s in after if WITHDRAWN in s.cited]
    during = [s for s in ok if s.sent <= withdraw_done and s.done >= withdraw_sent and WITHDRAWN in s.cited]
    latencies = [s.ms for s in ok] or [0.0]
    return {
        "backend": "sqlite" if kb is None else "postgresql",
        "clients": clients,
        "seconds": seconds,
        "workers": workers,
        "embedder": embedder,
        "requests": len(samples),
        "errors": len(errors),
        "error_examples": sorted({s.error for s in errors})[:5],
        "throughput_per_s": round(len(samples) / elapsed, 1),
        "p50_ms": round(percentile(latencies, 0.50), 1),
        "p95_ms": round(percentile(latencies, 0.95), 1),
        "p99_ms": round(percentile(latencies, 0.99), 1),
        "max_ms": round(max(latencies), 1),
        "cache_hit_rate": round(len(hits) / len(ok), 3) if ok else None,
        "hit_p50_ms": round(statistics.median([s.ms for s in hits]), 2) if hits else None,
        "miss_p50_ms": round(statistics.median([s.ms for s in misses]), 1) if misses else None,
        "server_cache": server_side(caches),
        "withdraw": {
            "status": withdrawn.status_code,
            "at_s": round(withdraw_sent - start, 2),
            "took_ms": round((withdraw_done - withdraw_sent) * 1000, 1),
            "answers_after": len(after),
            "answers_after_citing_withdrawn": len(stale),
            "in_flight_citing_withdrawn": len(during),
        },
        "per_question": {
            label: {
                "requests": len(group),
                "hit_rate": round(sum(s.cache == "hit" for s in group) / len(group), 3),
            }
            for label in sorted({s.label for s in ok})
            for group in [[s for s in ok if s.label == label]]
        },
    }


def server_side(caches: dict[int, dict[str, object]]) -> dict[str, object]:
    """Hits, misses and mean times inside the server, over every worker."""

    def total(name: str) -> float:
        return sum(float(c.get(name) or 0) for c in caches.values())

    def mean(name: str, count: str) -> float | None:
        weighted = sum(float(c.get(name) or 0) * float(c.get(count) or 0) for c in caches.values())
        return round(weighted / total(count), 3) if total(count) else None

    return {
        "workers_seen": len(caches),
        "requests_per_worker": sorted(int(total_) for total_ in (
            float(c.get("hits") or 0) + float(c.get("misses") or 0) for c in caches.values())),
        "hits": int(total("hits")),
        "misses": int(total("misses")),
        "mean_hit_ms": mean("mean_hit_ms", "hits"),
        "mean_miss_ms": mean("mean_miss_ms", "misses"),
    }  # fmt: skip


def table(report: dict[str, object]) -> str:
    """The report as a Markdown table."""
    withdraw, server_cache = report["withdraw"], report["server_cache"]
    assert isinstance(withdraw, dict) and isinstance(server_cache, dict)
    rows = [
        ("clients × seconds (workers)", f"{report['clients']} × {report['seconds']} s ({report['workers']})"),
        ("requests (throughput)", f"{report['requests']} ({report['throughput_per_s']}/s)"),
        ("errors", report["errors"]),
        ("latency p50 / p95 / p99 (max)",
         f"{report['p50_ms']} / {report['p95_ms']} / {report['p99_ms']} ms ({report['max_ms']} ms)"),
        ("cache hit rate", report["cache_hit_rate"]),
        ("cache hit p50 / miss p50 (client side)", f"{report['hit_p50_ms']} ms / {report['miss_p50_ms']} ms"),
        ("mean hit / miss inside the server",
         f"{server_cache.get('mean_hit_ms')} ms / {server_cache.get('mean_miss_ms')} ms"),
        ("requests per worker (server side)", server_cache.get("requests_per_worker")),
        ("withdraw (HTTP status, at, took)",
         f"{withdraw['status']} at {withdraw['at_s']} s, {withdraw['took_ms']} ms"),
        ("answers sent after the withdraw's response", withdraw["answers_after"]),
        ("… of them citing the withdrawn document", withdraw["answers_after_citing_withdrawn"]),
    ]  # fmt: skip
    lines = ["| measure | value |", "|---|---|", *(f"| {name} | {value} |" for name, value in rows)]
    return "\n".join(lines)


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


def _forget_shared_answers(folder: Path | str) -> None:
    """Every server starts with no shared cache: the side file removed, or the database's table emptied."""
    if isinstance(folder, Path):
        for leftover in folder.glob(f"{SERVING_FILE}*"):
            leftover.unlink()
        return
    from veracity.catalog.postgres.store import PostgresStore
    from veracity.catalog.serving import in_database

    store = PostgresStore(folder)
    try:
        in_database(store).clear_answers()
    finally:
        store.close()


def _reading_as(reader: str | None) -> dict[str, str]:
    """What the environment says to read as ``reader`` (the sequential reference reads as the servers)."""
    return {READER_URL_ENV: reader} if reader else {}


def run_engine(
    clients: list[int], workers: list[int], per_cell: int, embedder: str, questions_path: Path | None,
    threads: int = 2, kb: str | None = None, hit_rounds: int = 5,
) -> dict[str, object]:  # fmt: skip
    """Misses then hits per (workers, clients) cell, and the sequential reference (see the module).

    ``kb``: an empty PostgreSQL database to serve from (through a reader role), instead of a
    temporary directory.
    """
    questions, source = load_questions(questions_path)
    slices = [questions[i * per_cell : (i + 1) * per_cell] for i in range(len(clients))]
    if any(len(part) < per_cell for part in slices):
        raise SystemExit(
            f"{source} holds {len(questions)} distinct questions; {len(clients)} client counts × "
            f"--per-cell {per_cell} need {len(clients) * per_cell} "
            "(pass --questions FILE or a smaller --per-cell)"
        )
    cells: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="veracity-load-") as tmp:
        folder: Path | str = Path(tmp) / "kb" if kb is None else kb
        keys = build_served_kb(folder, make_embedder(embedder), sources=Path(tmp) / "acme")
        reader = None
        if kb is not None:
            from veracity.catalog.postgres.roles import create_reader

            reader = create_reader(kb, "load_asker")
        for count in workers:
            _forget_shared_answers(folder)
            process, base = _start(folder, count, reader, threads=threads)
            try:
                worker_caches(base, keys.operator, count)
                for clients_now, part in zip(clients, slices, strict=True):
                    reference = _sequential(folder, keys.public, part, reader)
                    miss = drive(base, keys.public, part, clients_now, timeout_s=120)
                    hit = drive(base, keys.public, part * hit_rounds, clients_now, timeout_s=120)
                    cells.append({
                        "workers": count, "clients": clients_now, "sequential": reference,
                        "miss": miss, "hit": hit,
                    })  # fmt: skip
                    rates = f"sequential {reference['per_s']}/s, miss {miss['per_s']}/s, hit {hit['per_s']}/s"
                    print(f"  workers {count}, clients {clients_now}: {rates}", file=sys.stderr, flush=True)
            finally:
                _stop(process)
    return {
        "traffic": "engine",
        "backend": "sqlite" if kb is None else "postgresql",
        "summary": summary(cells),
        "embedder": embedder,
        "threads_per_worker": threads,
        "questions_source": source,
        "per_cell": per_cell,
        "hit_rounds": hit_rounds,
        "sequential": pooled([cell["sequential"] for cell in cells]),
        "cells": cells,
    }


def _sequential(folder: Path | str, key: str, questions: list[str], reader: str | None) -> dict[str, float]:
    """The sequential rate on ``questions``, in this process, reading as the servers do."""
    previous = {name: os.environ.get(name) for name in _reading_as(reader)}
    os.environ.update(_reading_as(reader))
    try:
        return sequential_rate(folder, key, questions)
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def pooled(references: list[dict[str, float]]) -> dict[str, float]:
    """Every cell's sequential reference as one rate (questions over their summed time)."""
    questions = sum(int(r["questions"]) for r in references)
    seconds = sum(int(r["questions"]) / float(r["per_s"]) for r in references if r["per_s"])
    return {"questions": questions, "per_s": round(questions / seconds, 2) if seconds else 0.0}


def summary(cells: list[dict[str, object]]) -> dict[str, object]:
    """The acceptance cell (2 workers, 20 clients) in a few numbers, when it was run."""
    for cell in cells:
        if cell["workers"] == 2 and cell["clients"] == 20:
            miss, hit, reference = cell["miss"], cell["hit"], cell["sequential"]
            assert isinstance(miss, dict) and isinstance(hit, dict) and isinstance(reference, dict)
            return {
                "cell": "2 workers, 20 clients",
                "sequential_per_s": reference["per_s"],
                "miss_per_s": miss["per_s"],
                "miss_over_sequential": round(float(miss["per_s"]) / float(reference["per_s"]), 2),
                "miss_p95_over_p50": round(float(miss["p95_ms"]) / float(miss["p50_ms"]), 2),
                "hit_per_s": hit["per_s"],
                "errors": int(miss["errors"]) + int(hit["errors"]),
            }
    return {}


def _counts(text: str) -> list[int]:
    try:
        found = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected counts such as 1,4,20, got {text!r}") from None
    if not found or min(found) < 1:
        raise argparse.ArgumentTypeError(f"expected counts of at least 1, got {text!r}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )  # fmt: skip
    parser.add_argument("--traffic", choices=["engine", "mixed"], default="engine")
    parser.add_argument("--clients", type=_counts, default=None, help="engine: 1,4,20; mixed: 20 (one count)")
    parser.add_argument("--workers", type=_counts, default=None, help="engine: 1,2,4; mixed: 2 (one count)")
    parser.add_argument("--threads", type=int, default=2, help="answering threads a worker (serve --threads)")
    parser.add_argument("--per-cell", type=int, default=200, help="engine: distinct questions a client count")
    parser.add_argument("--hit-rounds", type=int, default=5, help="engine: rounds of hits a cell")
    parser.add_argument("--questions", type=Path, default=None, help="engine: queries.jsonl or one per line")
    parser.add_argument("--seconds", type=float, default=30.0, help="mixed: how long the clients ask")
    parser.add_argument("--embedder", default="use", choices=["use", "e5", "fake"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="Write the report as JSON here.")
    parser.add_argument("--kb", default=None, help="serve an empty postgresql:// database (a reader role)")
    args = parser.parse_args()
    if args.traffic == "engine":
        report = run_engine(
            args.clients or [1, 4, 20], args.workers or [1, 2, 4], args.per_cell, args.embedder,
            args.questions, args.threads, args.kb, max(1, args.hit_rounds),
        )  # fmt: skip
        print(engine_table(report))
    else:
        clients, workers = (args.clients or [20])[0], (args.workers or [2])[0]
        report = run(clients, args.seconds, workers, args.embedder, args.seed, args.kb)
        print(table(report))
    if args.out:
        args.out.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    if args.traffic == "engine":
        cells = report["cells"]
        assert isinstance(cells, list)
        if any(cell[kind]["errors"] for cell in cells for kind in ("miss", "hit")):
            print("FAILED: errors", file=sys.stderr)
            sys.exit(1)
        return
    withdraw = report["withdraw"]
    assert isinstance(withdraw, dict)
    if report["errors"] or withdraw["answers_after_citing_withdrawn"] or withdraw["status"] != 200:
        print(
            "FAILED: errors, a failed withdraw, or an answer citing the withdrawn document", file=sys.stderr
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
