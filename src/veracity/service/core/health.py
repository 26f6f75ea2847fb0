"""Whether a service may answer: its catalog answers, its published index version passed
verification (recorded when it was published, or verified once when the service starts), its
read replica answers; the dense channel's state is reported (the lexical fallback answers
without it).
"""

from __future__ import annotations

import threading
from typing import Any

from ...catalog.store import DatabaseStore
from ...index.sqlite.verify import verify_version
from ...index.sqlite.versions import get_version
from ...index.versioned import VersionedIndex, is_versioned
from ...kb.local import LocalKnowledgeBase
from .cache import catalog_state
from .degrade import UNREACHABLE, GuardedEmbedder

__all__ = ["IndexHealth"]


class IndexHealth:
    """The index verdicts of one service (kept per index version) and its readiness."""

    def __init__(
        self, kb: LocalKnowledgeBase, side: DatabaseStore, embedder: GuardedEmbedder, lock: threading.RLock
    ) -> None:
        """``side``: the service's connection for light reads; ``lock``: held to use ``kb``."""
        self.kb, self.side, self.embedder, self.lock = kb, side, embedder, lock
        self.verified: dict[int, tuple[bool, str]] = {}

    def record(self, version: int, passed: bool, detail: str) -> None:
        """Remember the verification of ``version`` (a reindex verified it)."""
        self.verified[version] = (passed, detail)

    def _index(self) -> VersionedIndex:
        index = self.kb.engine.snapshot
        assert is_versioned(index)
        return index

    def check_index(self, *, verify: bool = True) -> tuple[bool, str]:
        """Whether the published index version passed verification: as recorded when it was
        published, else (``verify``) by verifying it now; the verdict is kept per version."""
        version = catalog_state(self.side).index_version
        if version in self.verified:
            return self.verified[version]
        with self.side.read():
            manifest = get_version(self.side.connection, version).manifest or {}
        if (manifest.get("verification") or {}).get("passed"):
            self.verified[version] = (True, "verified when published")
        elif verify:
            with self.lock:
                index = self._index()
                result = verify_version(index, self.kb.engine.catalog, self.embedder.inner)
                detail = "; ".join(result.failures()) or "verified when the service started"
                self.verified[index.version] = (result.passed, detail)
                version = index.version
        else:
            return False, f"version {version} has not been verified"
        return self.verified[version]

    def readiness(self, *, detail: bool = True) -> dict[str, Any]:
        """``ready`` when the catalog answers, the published index version is verified and the
        read replica (``--read-url``), when there is one, answers.

        ``detail=False`` (what an unauthenticated probe gets) keeps only each check's ``ok``.
        """
        checks: dict[str, Any] = {}
        try:
            state = catalog_state(self.side)
            checks["catalog"] = {"ok": True, "revision": state.catalog_revision}
            verified, why = self.check_index(verify=False)
            checks["index"] = {"ok": verified, "version": state.index_version, "detail": why}
        except UNREACHABLE as exc:
            checks["catalog"] = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"}
        check_reader = getattr(self.side, "check_reader", None)  # PostgreSQL's reader URL
        if check_reader is not None and getattr(self.side, "scoped_reads", False):
            try:
                check_reader()
                checks["reader"] = {"ok": True}
            except UNREACHABLE as exc:
                checks["reader"] = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"}
        checks["dense"] = {"ok": self.embedder.available, "detail": "lexical fallback while unavailable"}
        ready = bool(
            checks["catalog"]["ok"]
            and checks.get("index", {}).get("ok")
            and checks.get("reader", {"ok": True})["ok"]
        )
        if not detail:
            checks = {name: {"ok": check["ok"]} for name, check in checks.items()}
        return {"ready": ready, "checks": checks}
