"""veracity: governed, evidence-first retrieval with warranted answers.

The library surface::

    import veracity
    kb = veracity.open("kb/")                 # a knowledge-base directory (created if empty)
    kb.ingest(["docs/"])                      # Markdown, text, HTML, PDF, DOCX
    answer = kb.ask("How long are snapshots kept?", roles=("public",), version=None, as_of="now")
    answer.status, answer.claims, answer.citations, answer.trace

    answer = veracity.ask("3.2 的 Team 能用 SAML 吗", veracity.Principal.of("starship", "public"))

``veracity.ask`` runs on the bundled Starship Workbench demo unless an
``Engine`` is given (``KnowledgeBase`` is its former name, still accepted).
"""

from __future__ import annotations

import importlib
import os
import typing
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

if typing.TYPE_CHECKING:
    from .kb.explain import Explanation
    from .kb.local import LocalKnowledgeBase
    from .pipeline.engine import Engine
    from .pipeline.outcome import Answer

_LAZY: dict[str, str] = {
    "Answer": ".pipeline.outcome",
    "Engine": ".pipeline.engine",
    "KnowledgeBase": ".pipeline.engine",
    "demo_knowledge_base": ".pipeline.engine",
    "Explanation": ".kb.explain",
    "LocalKnowledgeBase": ".kb.local",
}
"""Names whose modules load the engine (and the models behind it): imported on first use, so that
``import veracity`` (and every ``veracity`` command that needs no model) starts fast."""


def __getattr__(name: str) -> typing.Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})

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
    "Engine",
    "Explanation",
    "FactAnnotation",
    "IdentityError",
    "LocalKnowledgeBase",
    "Principal",
    "Query",
    "ValidationError",
    "VeracityError",
    "__version__",
    "ask",
    "open",
]


# Named like the built-in on purpose (veracity.open(path) opens a knowledge base); nothing in this
# module uses the built-in.
def open(
    path: str | os.PathLike[str], *, embedder: str | None = None, create: bool = True
) -> LocalKnowledgeBase:
    """Open the knowledge base in the directory ``path``; create it there when it holds none (``create``).

    ``embedder`` names the dense model of a new knowledge base (``use`` by
    default, ``e5``, or ``fake`` for tests); an existing one keeps its own.
    Ask with :meth:`LocalKnowledgeBase.ask` (keyword-only options), add
    documents with :meth:`LocalKnowledgeBase.ingest`; close it, or use ``with``.
    """
    from .index.embedders import make_embedder
    from .kb.local import open_local

    return open_local(path, embedder=make_embedder(embedder) if embedder else None, create=create)


def ask(
    question: str,
    principal: Principal,
    *,
    version: str | None = None,
    as_of: datetime | None = None,
    required_fact_ids: Sequence[str] | None = None,
    knowledge_base: Engine | None = None,
) -> Answer:
    """Answer ``question`` for ``principal``: claims with citations, partial, or abstain.

    Without ``knowledge_base`` the bundled demo is used, and ``version``
    and ``as_of`` default to the demo's (3.2, 2026-08-27T16:00Z). A knowledge base
    of the caller's is asked about every product version, as of now, unless told otherwise:
    the demo's moment and version are the demo's alone.
    """
    from datetime import UTC
    from datetime import datetime as clock

    from .fixtures import tenant_config
    from .pipeline.engine import demo_knowledge_base

    if knowledge_base is None:
        defaults = tenant_config()
        knowledge_base = demo_knowledge_base()
        version = version or defaults.target_version
        as_of = as_of or defaults.as_of
    return knowledge_base.ask(
        question,
        principal,
        version,
        as_of or clock.now(UTC),
        required_fact_ids=required_fact_ids,
    )
