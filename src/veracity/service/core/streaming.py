"""An answer as server-sent events, each written claim sent as soon as it passed verification.

The ask runs on a thread of its own with a claim listener set (:mod:`veracity.pipeline.llm.stream`):
with an LLM composer, each claim the model finishes is verified and, if it holds, sent at once
as a ``claim`` event, after the ``citation`` events of the citations it is the first to use.
When the answer is done, ``status`` follows, then whatever the stream has not said yet:

- if the answer's claims are the ones streamed (the usual case), the citations not sent yet
  (those the answer shows as related), then ``explain``, ``trace`` and ``done``;
- otherwise (the written answer fell back to the extractive one, or the model's stream started
  over), ``reset`` says to forget the streamed claims, and the whole answer follows as
  :meth:`~veracity.service.core.served.ServedAnswer.events` sends it.

The extractive composer, a cached answer and a degraded one stream nothing early: their claims
follow the ``status`` event in the same ``claim``/``citation`` form. A claim is never sent
before it is verified, and never one the final answer does not hold without a ``reset``.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ...model.contracts import Citation
from ...pipeline.llm.stream import CLAIM_LISTENER, StreamedClaim
from ...pipeline.render import claim_dict
from .served import CitedSource, ServedAnswer, served_citation

__all__ = ["answer_events"]

Events = Iterator[tuple[str, dict[str, Any]]]


def answer_events(
    ask: Callable[[], ServedAnswer],
    question: str,
    source: Callable[[Citation], CitedSource],
    on_answer: Callable[[ServedAnswer], None] | None = None,
) -> Events:
    """``accepted``, the claims as they are verified, then the rest (see the module docstring);
    ``on_answer`` gets the finished answer before its last events are sent."""
    yield "accepted", {"question": question}
    heard: queue.Queue[tuple[str, Any]] = queue.Queue()

    def run() -> None:
        CLAIM_LISTENER.set(lambda streamed: heard.put(("claim", streamed)))
        try:
            heard.put(("answered", ask()))
        except BaseException as exc:  # raised again in the reading thread
            heard.put(("failed", exc))

    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(run,), daemon=True, name="veracity-stream").start()
    streamed: list[dict[str, Any]] = []
    sent: set[int] = set()
    while True:
        kind, value = heard.get()
        if kind == "failed":
            raise value
        if kind == "answered":
            served: ServedAnswer = value
            break
        if value is None:  # the model started over: forget what it wrote
            if streamed:
                yield "reset", {}
            streamed, sent = [], set()
            continue
        claim: StreamedClaim = value
        for citation in claim.new_citations:
            sent.add(citation.citation_id)
            yield "citation", served_citation(citation, source(citation))
        data = {"number": len(streamed) + 1, **claim_dict(claim.claim)}
        streamed.append(data)
        yield "claim", data
    if on_answer is not None:
        on_answer(served)
    yield from _rest(served, streamed, sent)


def _rest(served: ServedAnswer, streamed: list[dict[str, Any]], sent: set[int]) -> Events:
    final = served.as_dict()
    claims = [{"number": n, **c} for n, c in enumerate(final["claims"], start=1)]
    if streamed and streamed != claims:
        yield "reset", {}
    if not streamed or streamed != claims:
        yield from served.events()
        return
    events = list(served.events())
    for name, data in events:
        if name == "claim" or (name == "citation" and data["id"] in sent):
            continue
        yield name, data
