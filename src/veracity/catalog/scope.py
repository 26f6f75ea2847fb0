"""The tenant a thread acts for, so a database can enforce it (row-level security).

The HTTP service knows the tenant of every request from its key alone. Inside
``with acting_for(tenant):`` every catalog or index read of a store that
supports it (:class:`~veracity.catalog.postgres.store.PostgresStore`) runs as
that tenant: PostgreSQL then returns no other tenant's rows, whatever a query
says. Stores without such a mechanism (SQLite, memory) ignore it; veracity's
own filter applies everywhere in any case.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["acting_for", "current_tenant"]

_TENANT: ContextVar[str | None] = ContextVar("veracity_tenant", default=None)


def current_tenant() -> str | None:
    """The tenant set by the innermost :func:`acting_for`, or ``None``."""
    return _TENANT.get()


@contextmanager
def acting_for(tenant: str) -> Iterator[None]:
    """Scope every read in the block to ``tenant``."""
    token = _TENANT.set(tenant)
    try:
        yield
    finally:
        _TENANT.reset(token)
