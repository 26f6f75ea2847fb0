"""LlamaIndex: a retriever of permitted chunks and a query engine that returns the governed answer.

    from veracity.integrations.llama_index import VeracityLlamaRetriever, VeracityQueryEngine
    kb = veracity.open("kb/")
    nodes = VeracityLlamaRetriever(kb, roles=("support",), k=4).retrieve("How long are snapshots kept?")
    response = VeracityQueryEngine(kb).query("How long are snapshots kept?")
    response.metadata["status"]          # answer | partial | abstain

The principal is fixed when the retriever or engine is built. Nodes carry the
citation data and scores in their metadata; the engine's response text is the
claims with their citation numbers (``response`` is None on abstain), its source nodes the
cited chunks, and its metadata the whole governed answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from .common import fixed_roles, governed, hits_wanted, require

require("llama_index.core", "llama-index")

from llama_index.core.base.base_query_engine import BaseQueryEngine  # noqa: E402
from llama_index.core.base.response.schema import Response  # noqa: E402
from llama_index.core.retrievers import BaseRetriever  # noqa: E402
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # noqa: E402

__all__ = ["VeracityLlamaRetriever", "VeracityQueryEngine"]

Moment = datetime | date | str | None


def _node(text: str, node_id: str, metadata: dict[str, Any], score: float | None) -> NodeWithScore:
    node = TextNode(text=text, id_=node_id, metadata=metadata)
    # citation data stays out of what an LLM or an embedder reads of the node
    node.excluded_llm_metadata_keys = node.excluded_embed_metadata_keys = list(metadata)
    return NodeWithScore(node=node, score=score)


class VeracityLlamaRetriever(BaseRetriever):
    """Permitted chunks of a veracity knowledge base, best first, for one fixed principal."""

    def __init__(
        self,
        knowledge_base: Any,
        *,
        tenant: str | None = None,
        roles: Sequence[str] = ("public",),
        version: str | None = None,
        as_of: Moment = None,
        k: int = 4,
    ) -> None:
        """Fix the principal and the number of chunks; ``knowledge_base`` is ``veracity.open(path)``."""
        super().__init__()
        self._kb = knowledge_base
        self._principal = (tenant, fixed_roles(roles), version, as_of)
        self._k = hits_wanted(k)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        tenant, roles, version, as_of = self._principal
        hits = self._kb.search(
            query_bundle.query_str, tenant=tenant, roles=roles, version=version, as_of=as_of, limit=self._k
        )
        return [_node(h.text, h.chunk_id, h.metadata(), h.rerank) for h in hits]


class VeracityQueryEngine(BaseQueryEngine):
    """Questions → governed answers (claims copied from cited chunks, or partial / abstain)."""

    def __init__(
        self,
        knowledge_base: Any,
        *,
        tenant: str | None = None,
        roles: Sequence[str] = ("public",),
        version: str | None = None,
        as_of: Moment = None,
    ) -> None:
        """Fix the principal; ``knowledge_base`` is ``veracity.open(path)``."""
        super().__init__(callback_manager=None)
        self._kb = knowledge_base
        self._principal = (tenant, fixed_roles(roles), version, as_of)

    def _get_prompt_modules(self) -> dict[str, Any]:
        return {}

    def _query(self, query_bundle: QueryBundle) -> Response:
        tenant, roles, version, as_of = self._principal
        question = query_bundle.query_str
        answer = self._kb.ask(question, tenant=tenant, roles=roles, version=version, as_of=as_of)
        data = governed(answer)
        text = " ".join(
            claim["text"] + "".join(f"[{cid}]" for cid in claim["citations"]) for claim in data["claims"]
        )
        sources = []
        for citation in answer.citations:
            _, chunks = self._kb.document(citation.document_id)
            chunk = next((c for c in chunks if c.chunk_id == citation.chunk_id), None)
            if chunk is None:  # changed since the answer: the answer's citation still says what it was
                continue
            metadata = {
                "citation": citation.citation_id,
                "source_id": citation.source_id,
                "revision": citation.revision,
                "document_id": citation.document_id,
                "chunk_id": citation.chunk_id,
                "heading_path": list(citation.heading_path),
            }
            sources.append(_node(chunk.text, chunk.chunk_id, metadata, None))
        # LlamaIndex's own convention for "no text": response None (str() of it prints "None")
        return Response(response=text or None, source_nodes=sources, metadata=data)

    async def _aquery(self, query_bundle: QueryBundle) -> Response:
        return self._query(query_bundle)
