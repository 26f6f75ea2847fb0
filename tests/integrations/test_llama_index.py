"""The LlamaIndex adapter: nodes with citation metadata, the governed answer as a Response,
and no hidden document through either."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("llama_index.core", reason="pip install 'veracity[llama-index]'")

from llama_index.core.schema import NodeWithScore

from tests.integrations.conftest import leaks
from veracity.integrations.llama_index import VeracityLlamaRetriever, VeracityQueryEngine

DEMO = {"tenant": "starship", "version": "3.2", "as_of": "2026-08-27T16:00:00Z"}


def test_retriever_returns_scored_nodes_with_citation_metadata(kb) -> None:
    nodes = VeracityLlamaRetriever(kb, k=3, **DEMO).retrieve("3.2 的 Team 能用 SAML 吗")
    assert 1 <= len(nodes) <= 3 and all(isinstance(n, NodeWithScore) for n in nodes)
    first = nodes[0]
    assert first.node.node_id == first.node.metadata["chunk_id"] and first.score is not None
    assert {"document_id", "revision", "source_id", "path", "heading_path", "trust"} <= set(
        first.node.metadata
    )
    assert "chunk_id" in first.node.excluded_llm_metadata_keys


def test_query_engine_returns_the_governed_answer(kb) -> None:
    engine = VeracityQueryEngine(kb, **DEMO)
    response = engine.query("3.2 的 Team 能用 SAML 吗")
    assert response.metadata["status"] == "answer" and "[1]" in str(response)
    assert response.source_nodes and response.source_nodes[0].node.metadata["citation"] == 1
    abstain = engine.query("3.2 支持量子加密登录吗？")
    assert abstain.metadata["status"] == "abstain" and abstain.response is None and not abstain.source_nodes


def test_a_hidden_document_never_comes_through(kb) -> None:
    nodes = VeracityLlamaRetriever(kb, tenant="acme", k=10).retrieve(
        "When are salaries paid? payroll codeword"
    )
    response = VeracityQueryEngine(kb, tenant="acme").query("When are salaries paid?")
    seen = json.dumps(
        [n.node.get_content() for n in nodes] + [n.node.metadata for n in nodes], ensure_ascii=False
    )
    seen += json.dumps(response.metadata, ensure_ascii=False) + str(response)
    assert not leaks(seen)


def test_roles_as_one_string_and_a_bad_k_are_read_as_the_caller_meant_them(kb) -> None:
    from veracity.model.errors import ValidationError

    staff = VeracityLlamaRetriever(kb, tenant="acme", roles="staff", k=10).retrieve("payroll codeword")
    assert any("ZEBRA-42" in n.node.get_content() for n in staff)  # the role staff, not s, t, a, f
    answered = VeracityQueryEngine(kb, tenant="acme", roles="staff").query("payroll codeword")
    assert "ZEBRA-42" in json.dumps(answered.metadata, ensure_ascii=False)  # the engine reads it so too
    for k in (0, -1, "3"):
        with pytest.raises(ValidationError, match="k is the number of chunks to return"):
            VeracityLlamaRetriever(kb, tenant="acme", k=k)  # type: ignore[arg-type]
