"""The LangChain adapter: langchain-core's standard retriever tests, citation metadata, the
governed-answer runnable in a branching chain, and no hidden document through either."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("langchain_core", reason="pip install 'veracity[langchain]'")

from langchain_core.runnables import RunnableBranch, RunnableLambda
from langchain_tests.integration_tests import RetrieversIntegrationTests
from pydantic import ValidationError as PydanticValidationError

from tests.integrations.conftest import leaks, opened
from veracity.integrations.langchain import VeracityRetriever, governed_answer
from veracity.model.errors import IdentityError, ValidationError


class TestVeracityRetrieverStandard(RetrieversIntegrationTests):
    """langchain-core's own retriever contract (k at construction and at invocation, Documents)."""

    @property
    def retriever_constructor(self) -> type[VeracityRetriever]:
        return VeracityRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"knowledge_base": opened(), "tenant": "starship", "roles": ("public",), "version": "3.2",
                "as_of": "2026-08-27T16:00:00Z"}  # fmt: skip

    @property
    def retriever_query_example(self) -> str:
        return "Team 计划 SAML 单点登录"


def test_documents_carry_citation_metadata_and_scores(kb) -> None:
    retriever = VeracityRetriever(
        knowledge_base=kb, tenant="starship", version="3.2", as_of="2026-08-27T16:00:00Z", k=3
    )
    docs = retriever.invoke("3.2 的 Team 能用 SAML 吗")
    assert 1 <= len(docs) <= 3
    meta = docs[0].metadata
    for key in (
        "document_id",
        "revision",
        "chunk_id",
        "source_id",
        "path",
        "heading_path",
        "trust",
        "rerank",
    ):
        assert key in meta
    assert docs[0].id == meta["chunk_id"] and meta["rank"] == 1


def test_the_principal_is_fixed_at_construction(kb) -> None:
    retriever = VeracityRetriever(knowledge_base=kb, tenant="acme", k=5)
    with pytest.raises(PydanticValidationError):
        retriever.roles = ("staff",)  # type: ignore[misc]
    widened = retriever.invoke("payroll codeword", config={"metadata": {"roles": ["staff"]}}, roles=["staff"])
    assert not leaks(json.dumps([d.model_dump() for d in widened], ensure_ascii=False))


def test_a_chain_branches_on_abstain(kb) -> None:
    answer = governed_answer(kb, tenant="starship", version="3.2", as_of="2026-08-27T16:00:00Z")
    chain = answer | RunnableBranch(
        (lambda a: a["status"] == "abstain", RunnableLambda(lambda a: "escalate to a person")),
        RunnableLambda(lambda a: " ".join(c["text"] for c in a["claims"])),
    )
    assert "SAML" in chain.invoke("3.2 的 Team 能用 SAML 吗")
    assert chain.invoke("3.2 支持量子加密登录吗？") == "escalate to a person"


def test_a_hidden_document_never_comes_through(kb) -> None:
    for role_set in (("public",),):
        docs = VeracityRetriever(knowledge_base=kb, tenant="acme", roles=role_set, k=10).invoke(
            "When are salaries paid? payroll codeword"
        )
        answer = governed_answer(kb, tenant="acme", roles=role_set).invoke("When are salaries paid?")
        seen = json.dumps([d.model_dump() for d in docs], ensure_ascii=False) + json.dumps(
            answer, ensure_ascii=False
        )
        assert not leaks(seen)
    staff = VeracityRetriever(knowledge_base=kb, tenant="acme", roles=("staff",), k=10).invoke(
        "payroll codeword"
    )
    assert any("ZEBRA-42" in d.page_content for d in staff)  # the same search finds it for staff


def test_the_answer_runnable_takes_a_chains_dict_and_roles_as_one_string(kb) -> None:
    answer = governed_answer(kb, tenant="starship", version="3.2", as_of="2026-08-27T16:00:00Z")
    asked = answer.invoke("3.2 的 Team 能用 SAML 吗")
    assert answer.invoke({"question": "3.2 的 Team 能用 SAML 吗"}) == asked
    assert answer.invoke({"input": "3.2 的 Team 能用 SAML 吗", "history": []}) == asked
    with pytest.raises(TypeError, match="a dict with a string under 'question' or 'input' or 'query'"):
        answer.invoke({"text": "3.2 的 Team 能用 SAML 吗"})
    one = governed_answer(kb, tenant="acme", roles="staff").invoke("payroll codeword")
    assert one == governed_answer(kb, tenant="acme", roles=("staff",)).invoke("payroll codeword")
    with pytest.raises(IdentityError, match="defines no role 'auditor'"):  # the role, not its letters
        kb.ask("payroll codeword", tenant="acme", roles="auditor")


def test_a_bad_k_is_named_k(kb) -> None:
    retriever = VeracityRetriever(knowledge_base=kb, tenant="acme", k=4)
    with pytest.raises(ValidationError, match="k is the number of chunks to return, at least 1; got 0"):
        retriever.invoke("payroll codeword", k=0)
