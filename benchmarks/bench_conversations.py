"""What a conversation turn costs next to the same question asked alone, in one process.

The served demo (the Starship documents plus tenant ``acme``, :mod:`veracity.testing.tenants`)
is opened by one gateway with its answer cache off, so every ask is computed. Each question
pair (a first question and a follow-up written the way people type them) is asked twice:

1. **alone**: the first question, then the follow-up *as the conversation resolves it*, each
   through ``Gateway.ask`` (the reference: the same engine work, no conversation);
2. **in a conversation**: ``Conversations.ask`` for both turns (the follow-up resolved against
   the first turn, both turns stored, the history read back once at the end).

Printed: p50/p95 wall ms of the single asks and of the turns, the turn's overhead (turn minus
its own single ask, per pair), the resolution alone (``resolve_followup``) and the history
read, and the ratio of the medians. Warm: one pass of every question before timing (the models
loaded, the engine's per-generation state read). The pairs alternate between the two ways.

    python benchmarks/bench_conversations.py --repeats 3

Prints measured numbers only; the machine may be shared (load averages are printed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from veracity.index.embedders import make_embedder
from veracity.service.core.conversations import Conversations
from veracity.service.core.gateway import Gateway, GatewaySettings
from veracity.service.core.rate_limits import RateLimit
from veracity.testing.tenants import build_served_kb
from veracity.text.followup import resolve_followup

PAIRS = (
    ("3.2 的 Team 计划能用 SAML 吗？", "那 2.8 呢？"),
    ("2.8 的 Team 计划能用 SAML 吗？", "那 3.2 呢？"),
    ("3.2 的 Team 计划成员上限是多少？", "那 Enterprise 计划呢？"),
    ("升级到 3.2 以后 Team 计划还能用 SAML 吗？", "那 OIDC 呢？"),
    ("3.2 的 Enterprise 计划支持哪些登录方式？", "那 Team 计划呢？"),
    ("如何邀请成员加入工作区？", "那管理席位呢？"),
)


def stats(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):8.2f} ms  p95 {p95:8.2f} ms  (n={len(ordered)})"


def timed(call, *args, **kwargs) -> tuple[object, float]:
    start = time.perf_counter()
    value = call(*args, **kwargs)
    return value, (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3, help="passes over the pairs [3]")
    parser.add_argument("--embedder", default="use", help="use | e5 | fake [use]")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    folder = (args.workdir or Path(tempfile.mkdtemp(prefix="veracity-conv-"))) / "kb"
    keys = build_served_kb(folder, make_embedder(args.embedder))
    settings = GatewaySettings(cache_entries=0, shared=False, rate_limit=RateLimit(per_minute=0))
    gate = Gateway.open(folder, settings=settings)
    talks = Conversations(gate)
    caller = gate.admit(keys.public)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; embedder {args.embedder}; "
          f"{len(PAIRS)} question pairs × {args.repeats} passes, answer cache off")  # fmt: skip
    resolved = {follow: resolve_followup(follow, first, None, None) for first, follow in PAIRS}
    for first, follow in PAIRS:  # warm
        gate.ask(caller, first)
        gate.ask(caller, resolved[follow].question, version=resolved[follow].version)
    alone, turns, overheads, resolutions, reads = [], [], [], [], []
    for repeat in range(args.repeats):
        for index, (first, follow) in enumerate(PAIRS):
            order = ("alone", "conversation") if (repeat + index) % 2 == 0 else ("conversation", "alone")
            single: list[float] = []
            talked: list[float] = []
            for way in order:
                if way == "alone":
                    single.append(timed(gate.ask, caller, first)[1])
                    target = resolved[follow]
                    single.append(timed(gate.ask, caller, target.question, version=target.version)[1])
                else:
                    conversation = talks.start(caller)["id"]
                    talked.append(timed(talks.ask, caller, conversation, first)[1])
                    talked.append(timed(talks.ask, caller, conversation, follow)[1])
                    reads.append(timed(talks.read, caller, conversation)[1])
            alone.extend(single)
            turns.extend(talked)
            overheads.extend(t - s for t, s in zip(talked, single, strict=True))
            resolutions.append(timed(resolve_followup, follow, first, None, None)[1])
    print(f"single asks (Gateway.ask)            {stats(alone)}")
    print(f"conversation turns (Conversations.ask) {stats(turns)}")
    print(f"turn minus its single ask            {stats(overheads)}")
    print(f"follow-up resolution alone           {stats(resolutions)}")
    print(f"history read (GET, every turn re-checked) {stats(reads)}")
    print(f"ratio of medians, turn / single ask: {statistics.median(turns) / statistics.median(alone):.3f}")
    talks.close()
    gate.close()


if __name__ == "__main__":
    main()
