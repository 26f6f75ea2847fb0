"""Answers streamed as claims pass verification: a written claim is sent once it holds, before the
status; a stream that starts over says ``reset``; the extractive answer streams the same events."""

from __future__ import annotations

from pathlib import Path

from veracity.kb.local import open_local
from veracity.service.core.gateway import Gateway
from veracity.testing.llm_server import Fault, faithful_reply, scripted_server

QUESTION = "3.2 的 Team 能用 SAML 吗"


def events(folder: Path, keys, script) -> tuple[list[tuple[str, dict]], object]:
    with scripted_server(script) as endpoint:
        with open_local(folder, create=False) as kb:
            kb.set_llm({"base_url": endpoint.base_url, "model": "scripted"})
        gate = Gateway.open(folder)
        try:
            caller = gate.admit(keys.public)
            streamed = list(gate.ask_events(caller, QUESTION, version="3.2"))
            final = gate.ask(caller, QUESTION, version="3.2").as_dict()  # the same answer, from the cache
        finally:
            gate.close()
    assert all(request.get("stream") for request in endpoint.requests)  # asked to stream: someone listens
    return streamed, final


def test_written_claims_arrive_before_the_status_each_after_its_citations(served_kb) -> None:
    folder, keys = served_kb
    streamed, final = events(folder, keys, faithful_reply)
    names = [name for name, _ in streamed]
    assert names[0] == "accepted" and names[-1] == "done" and "reset" not in names
    status_at = names.index("status")
    claims = [data for name, data in streamed if name == "claim"]
    assert claims and all(names.index("claim") < status_at for _ in claims)  # before the status
    assert [{k: v for k, v in c.items() if k != "number"} for c in claims] == final["claims"]
    assert all(c["composer"] == "llm" for c in claims)
    seen: set[int] = set()
    for name, data in streamed:  # every claim's citations were sent before it
        if name == "citation":
            seen.add(data["id"])
        elif name == "claim":
            assert set(data["citations"]) <= seen
    assert seen == {c["id"] for c in final["citations"]}
    assert [data for name, data in streamed if name == "citation"] == sorted(
        final["citations"], key=lambda c: c["id"]
    )


def test_a_stream_that_starts_over_is_reset(served_kb) -> None:
    folder, keys = served_kb
    calls: list[int] = []

    def cut_once(request) -> str | Fault:
        text = faithful_reply(request)
        calls.append(1)
        return Fault(text=text + "\n" + text, cut_after=len(text.split()) + 2) if len(calls) == 1 else text

    streamed, final = events(folder, keys, cut_once)
    names = [name for name, _ in streamed]
    assert "reset" in names and len(calls) == 2
    after = names.index("reset")
    again = [data for name, data in streamed[after:] if name == "claim"]
    assert [{k: v for k, v in c.items() if k != "number"} for c in again] == final["claims"]


def test_the_extractive_answer_streams_the_same_events(served_kb) -> None:
    folder, keys = served_kb
    gate = Gateway.open(folder)
    try:
        streamed = list(gate.ask_events(gate.admit(keys.public), QUESTION, version="3.2"))
    finally:
        gate.close()
    names = [name for name, _ in streamed]
    assert (
        names[:2] == ["accepted", "status"]
        and "claim" in names
        and "citation" in names
        and "reset" not in names
    )
