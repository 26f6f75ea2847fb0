"""The document reads a gateway serves, each for one caller, and what every request shares.

:class:`DocumentReads` is a part of :class:`~veracity.service.core.gateway.Gateway` (a mixin):
the documents a caller may see, one document, which earlier citations an answer could no
longer make, a cited page as a picture and a cited chunk in its document. Each read runs under
the gateway's lock, inside :func:`request_scope` for the caller's tenant, at the moment the
gateway resolves; what a caller may see is :mod:`veracity.service.core.visible`'s.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ...catalog.catalog import Resolution
from ...catalog.ledger import parsed_file_digest
from ...catalog.postgres.replay import replay_fence
from ...catalog.scope import acting_for
from ...catalog.sources import source_file
from ...catalog.store import DatabaseStore
from ...kb.backends import uploads_folder
from ...kb.keys import ApiKey
from ...kb.local import LocalKnowledgeBase, Moment
from ...model.contracts import Principal
from ...model.errors import NotFoundError
from .page_images import page_png
from .settings import GatewaySettings
from .visible import chunk_context, document_view, served_paths, visible_documents

__all__ = ["Caller", "DocumentReads", "request_scope"]


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a request comes from: a stored API key (never anything the request says)."""

    key: ApiKey

    @property
    def principal(self) -> Principal:
        """The tenant and roles of the key."""
        return self.key.principal

    @property
    def operator(self) -> bool:
        """Whether the key may use operator actions."""
        return self.key.operator


@contextmanager
def request_scope(tenant: str) -> Iterator[None]:
    """One request's reads: acting for ``tenant``, and on a read replica waiting for the primary's
    position once for them all (:func:`~veracity.catalog.postgres.replay.replay_fence`)."""
    with acting_for(tenant), replay_fence():
        yield


class DocumentReads:
    """The gateway's document reads (a mixin: needs ``kb``, ``side``, ``settings``, ``store``,
    ``_lock`` and ``_moment``, which :class:`~veracity.service.core.gateway.Gateway` has)."""

    kb: LocalKnowledgeBase
    side: DatabaseStore
    settings: GatewaySettings
    _lock: threading.RLock

    @property
    def store(self) -> DatabaseStore:  # pragma: no cover - defined by the gateway
        """See ``Gateway.store``."""
        raise NotImplementedError

    def _moment(self, tenant: str, as_of: Moment) -> datetime:  # pragma: no cover - defined by the gateway
        """See ``Gateway._moment``."""
        raise NotImplementedError

    def _paths(self, tenant: str) -> dict[tuple[str, str], str]:
        """The tenant's source paths, uploads by the name they were uploaded under."""
        from ...catalog.sources import source_paths

        assert self.kb.path is not None
        uploads = uploads_folder(self.kb.path).resolve()
        return served_paths(source_paths(self.store.connection, tenant), uploads)

    @contextmanager
    def _reading_for(self, caller: Caller, as_of: Moment) -> Iterator[datetime]:
        """Under the gateway's lock, in ``caller``'s request scope: the moment to read at."""
        tenant = caller.principal.tenant
        with self._lock, request_scope(tenant):
            yield self._moment(tenant, as_of)

    def documents(self, caller: Caller, *, as_of: Moment = None) -> list[dict[str, Any]]:
        """The documents ``caller`` may see (an operator: every one of its tenant)."""
        principal = caller.principal
        with self._reading_for(caller, as_of) as moment:
            return visible_documents(
                self.kb.engine.catalog,
                principal,
                moment,
                self._paths(principal.tenant),
                operator=caller.operator,
            )

    def document(self, caller: Caller, id_or_source_id: str, *, as_of: Moment = None) -> dict[str, Any]:
        """One visible document with its chunks; ``NotFoundError`` for any other."""
        principal = caller.principal
        with self._reading_for(caller, as_of) as moment:
            return document_view(
                self.kb.engine.catalog, id_or_source_id, principal, moment, self._paths(principal.tenant),
                operator=caller.operator,
            )  # fmt: skip

    def uncitable(self, caller: Caller, document_ids: Sequence[str], version: str | None) -> list[Resolution]:
        """Of ``document_ids`` cited earlier, those an answer for ``caller`` could not cite now
        (withdrawn, retired, deleted, no longer permitted), as the live catalog resolves them."""
        with self._reading_for(caller, None) as moment:
            found = self.kb.engine.catalog.resolve_many(list(document_ids), caller.principal, version, moment)
        return [resolution for resolution in found.values() if not resolution.eligible]

    def page_image(
        self, caller: Caller, id_or_source_id: str, page: int, *, width: int = 1000, as_of: Moment = None
    ) -> bytes:
        """A page of a visible document's original file as PNG (see :mod:`.page_images`)."""
        if not self.settings.page_images:
            raise NotFoundError("page images are turned off on this server")
        principal = caller.principal

        def original(tenant: str, source_id: str) -> Path | None:
            with self.side.read():
                found = source_file(self.side.connection, tenant, source_id)
            return Path(found) if found else None

        def parsed_digest(document_id: str) -> str | None:
            with self.side.read():
                return parsed_file_digest(self.side.connection, document_id)

        with self._reading_for(caller, as_of) as moment:
            return page_png(
                self.kb.engine.catalog, id_or_source_id, page, principal, moment, original,
                operator=caller.operator, width_px=width, parsed_digest=parsed_digest,
            )  # fmt: skip

    def chunk_context(
        self, caller: Caller, id_or_source_id: str, chunk_id: str, *, quote: str | None = None,
        around: int = 1, as_of: Moment = None,
    ) -> dict[str, Any]:  # fmt: skip
        """A cited chunk in its visible document, the quote highlighted; ``NotFoundError`` otherwise."""
        principal = caller.principal
        with self._reading_for(caller, as_of) as moment:
            return chunk_context(
                self.kb.engine.catalog, id_or_source_id, chunk_id, principal, moment,
                self._paths(principal.tenant), operator=caller.operator, quote=quote, around=around,
            )  # fmt: skip
