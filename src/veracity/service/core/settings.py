"""The limits and fallbacks of a :class:`~veracity.service.core.gateway.Gateway`."""

from __future__ import annotations

from dataclasses import dataclass, field

from .cache import DEFAULT_ENTRIES
from .degrade import DENSE_RETRY_SECONDS, RERANK_TIMEOUT_SECONDS
from .rate_limits import RateLimit

__all__ = ["GatewaySettings"]


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    """Limits and fallbacks of a gateway."""

    cache_entries: int = DEFAULT_ENTRIES
    rate_limit: RateLimit = field(default_factory=RateLimit)
    rerank_timeout_s: float = RERANK_TIMEOUT_SECONDS
    dense_retry_s: float = DENSE_RETRY_SECONDS
    search_limit: int = 20
    page_images: bool = True
    """Serve cited PDF pages and images as pictures (``serve --no-page-images`` turns it off)."""
    answer_sessions: int = 2
    """Engines answering at the same time in one process (each holds its own index state)."""
    shared: bool = True
    """Share the answer cache and rate limits with the other workers of the knowledge base."""
