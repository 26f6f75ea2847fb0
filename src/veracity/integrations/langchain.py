"""LangChain: a retriever of permitted chunks and a runnable for the governed answer.

    from veracity.integrations.langchain import VeracityRetriever, governed_answer
    kb = veracity.open("kb/")
    retriever = VeracityRetriever(knowledge_base=kb, roles=("support",), k=4)
    docs = retriever.invoke("How long are snapshots kept?")      # list[Document]
    answer = governed_answer(kb).invoke("How long are snapshots kept?")
    if answer["status"] == "abstain": ...                        # branch in a chain

The principal (tenant, roles, version, as_of) is fixed when the retriever is
built; nothing passed at invocation can widen it. Each ``Document`` carries
the citation data (document id, revision, chunk id, source path, heading path,
pages, trust) and the scores in its metadata.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from .common import fixed_roles, governed, hits_wanted, require

require("langchain_core", "langchain")

from langchain_core.callbacks import CallbackManagerForRetrieverRun  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.runnables import Runnable, RunnableLambda  # noqa: E402
from pydantic import ConfigDict  # noqa: E402

__all__ = ["VeracityRetriever", "governed_answer"]


class VeracityRetriever(BaseRetriever):
    """Permitted chunks of a veracity knowledge base, best first, for one fixed principal."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    knowledge_base: Any
    """A :class:`veracity.kb.local.LocalKnowledgeBase` (``veracity.open(path)``)."""
    tenant: str | None = None
    roles: tuple[str, ...] = ("public",)
    version: str | None = None
    as_of: datetime | date | str | None = None
    k: int = 4

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        k = hits_wanted(kwargs.get("k", self.k))
        hits = self.knowledge_base.search(
            query, tenant=self.tenant, roles=self.roles, version=self.version, as_of=self.as_of, limit=k
        )
        return [Document(page_content=hit.text, metadata=hit.metadata(), id=hit.chunk_id) for hit in hits]


QUESTION_KEYS = ("question", "input", "query")
"""The keys a chain's input dict may carry the question under (the first one present counts)."""


def question_text(value: str | Mapping[str, Any]) -> str:
    """The question of a runnable's input: a string, or a chain's dict (:data:`QUESTION_KEYS`)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in QUESTION_KEYS:
            if isinstance(value.get(key), str):
                return str(value[key])
    raise TypeError(
        f"the question is a string, or a dict with a string under {' or '.join(map(repr, QUESTION_KEYS))}; "
        f"got {type(value).__name__}"
    )


def governed_answer(
    knowledge_base: Any,
    *,
    tenant: str | None = None,
    roles: Sequence[str] = ("public",),
    version: str | None = None,
    as_of: datetime | date | str | None = None,
) -> Runnable[str | Mapping[str, Any], dict[str, Any]]:
    """A runnable: question → the governed answer (status, claims, citations, missing facts,
    reasons) for the principal fixed here, so a chain can branch on ``abstain``."""
    asked_roles = fixed_roles(roles)

    def answer(question: str | Mapping[str, Any]) -> dict[str, Any]:
        return governed(
            knowledge_base.ask(
                question_text(question), tenant=tenant, roles=asked_roles, version=version, as_of=as_of
            )
        )

    return RunnableLambda(answer, name="veracity_governed_answer")
