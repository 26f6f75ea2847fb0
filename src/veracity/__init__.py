"""veracity: governed, evidence-first retrieval with warranted answers.

The library surface::

    import veracity
    answer = veracity.ask("3.2 的 Team 能用 SAML 吗", veracity.Principal.of("starship", "public"))
    answer.status, answer.claims, answer.citations, answer.trace

``ask`` runs on the bundled Starship Workbench demo unless a ``KnowledgeBase``
is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ._version import __version__
from .model.contracts import (
    AnswerStatus,
    Chunk,
    Citation,
    Claim,
    Document,
    FactAnnotation,
    Principal,
    Query,
)
from .model.errors import (
    CatalogError,
    CitationError,
    ConfigError,
    IdentityError,
    ValidationError,
    VeracityError,
)
from .pipeline.engine import Answer, KnowledgeBase, demo_knowledge_base

__all__ = [
    "Answer",
    "AnswerStatus",
    "CatalogError",
    "Chunk",
    "Citation",
    "CitationError",
    "Claim",
    "ConfigError",
    "Document",
    "FactAnnotation",
    "IdentityError",
    "KnowledgeBase",
    "Principal",
    "Query",
    "ValidationError",
    "VeracityError",
    "__version__",
    "ask",
]


def ask(
    question: str,
    principal: Principal,
    *,
    target_version: str | None = None,
    as_of: datetime | None = None,
    required_fact_ids: Sequence[str] | None = None,
    knowledge_base: KnowledgeBase | None = None,
) -> Answer:
    """Answer ``question`` for ``principal``: claims with citations, partial, or abstain.

    Without ``knowledge_base`` the bundled demo is used, and ``target_version``
    and ``as_of`` default to the demo's (3.2, 2026-08-27T16:00Z).
    """
    from .fixtures import tenant_config

    kb = knowledge_base or demo_knowledge_base()
    defaults = tenant_config()
    return kb.ask(
        question,
        principal,
        target_version or defaults.target_version,
        as_of or defaults.as_of,
        required_fact_ids=required_fact_ids,
    )
