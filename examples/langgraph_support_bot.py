"""A LangGraph support bot whose answers come from veracity: answer, retry with a
rephrasing on abstain, or hand off to a person.

    veracity init-demo --kb demo/
    python examples/langgraph_support_bot.py --kb demo/ --version 3.2 --as-of 2026-08-27 \\
        "3.2 支持量子加密登录吗？" --rephrase "3.2 的 Team 能用 SAML 吗"

The graph::

    START → veracity ─┬─ answer / partial ──────────────→ reply → END
                      ├─ abstain, a rephrasing left ──→ rephrase → veracity
                      └─ abstain, none left ──────────→ handoff → END

One node, ``veracity``, is the whole governed pipeline (eligibility → recall →
fusion → rerank → return gate → evidence gate → decide → compose): the graph
routes on its status but never holds a chunk that the gates did not pass, so
a retry is governed exactly like the first try. The principal is fixed when
the graph is built; nothing in the state can widen it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

import veracity
from veracity.integrations.langchain import governed_answer


class BotState(TypedDict):
    question: str
    rephrasings: list[str]  # what the retry loop may try next (an LLM rewriter would produce these)
    attempts: int
    answer: dict[str, Any]
    reply: str


def build_graph(
    knowledge_base: Any,
    *,
    tenant: str | None = None,
    roles: Sequence[str] = ("public",),
    version: str | None = None,
    as_of: str | None = None,
    max_attempts: int = 3,
) -> Any:
    """The compiled graph over ``knowledge_base`` for one fixed principal."""
    answer = governed_answer(knowledge_base, tenant=tenant, roles=roles, version=version, as_of=as_of)

    def ask(state: BotState) -> dict[str, Any]:
        return {"answer": answer.invoke(state["question"]), "attempts": state["attempts"] + 1}

    def rephrase(state: BotState) -> dict[str, Any]:
        return {"question": state["rephrasings"][0], "rephrasings": state["rephrasings"][1:]}

    def reply(state: BotState) -> dict[str, Any]:
        governed = state["answer"]
        lines = [
            claim["text"] + "".join(f"[{c}]" for c in claim["citations"]) for claim in governed["claims"]
        ]
        if governed["status"] == "partial":
            missing = governed["uncovered_subquestions"] or governed["missing_fact_ids"]
            lines.append("Not covered by the documents: " + "; ".join(missing))
        for citation in governed["citations"]:
            lines.append(f"[{citation['id']}] {citation['source_id']} rev {citation['revision']}: "
                         + " > ".join(citation["heading_path"]))  # fmt: skip
        return {"reply": "\n".join(lines)}

    def handoff(state: BotState) -> dict[str, Any]:
        return {
            "reply": f"The documents do not cover this; passing it to a person ({state['attempts']} tries)."
        }

    def route(state: BotState) -> str:
        if state["answer"]["status"] != "abstain":
            return "reply"
        if state["rephrasings"] and state["attempts"] < max_attempts:
            return "rephrase"
        return "handoff"

    graph = StateGraph(BotState)
    graph.add_node("veracity", ask)
    graph.add_node("rephrase", rephrase)
    graph.add_node("reply", reply)
    graph.add_node("handoff", handoff)
    graph.add_edge(START, "veracity")
    graph.add_conditional_edges("veracity", route, ["reply", "rephrase", "handoff"])
    graph.add_edge("rephrase", "veracity")
    graph.add_edge("reply", END)
    graph.add_edge("handoff", END)
    return graph.compile()


def run(graph: Any, question: str, rephrasings: Sequence[str] = ()) -> BotState:
    """Run ``graph`` on ``question``; the final state (answer, reply, attempts)."""
    start: BotState = {
        "question": question,
        "rephrasings": list(rephrasings),
        "attempts": 0,
        "answer": {},
        "reply": "",
    }
    final: BotState = graph.invoke(start)
    return final


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("question")
    parser.add_argument(
        "--kb", required=True, help="a knowledge-base directory (veracity init-demo --kb DIR)"
    )
    parser.add_argument("--tenant")
    parser.add_argument("--role", action="append", help="a role of the asker (repeat; default public)")
    parser.add_argument("--version", help="product version (default: every version)")
    parser.add_argument("--as-of", help="a date or ISO datetime (default: now)")
    parser.add_argument(
        "--rephrase", action="append", default=[], help="a rephrasing to try on abstain (repeat)"
    )
    args = parser.parse_args(argv)
    with veracity.open(args.kb, create=False) as kb:
        graph = build_graph(
            kb, tenant=args.tenant, roles=args.role or ("public",), version=args.version, as_of=args.as_of
        )
        final = run(graph, args.question, args.rephrase)
    print(f"{final['answer']['status']} after {final['attempts']} tries (last question: {final['question']})")
    print(final["reply"])
    return 0 if final["answer"]["status"] != "abstain" else 3


if __name__ == "__main__":
    sys.exit(main())
