"""The eligibility step over one index version: SQL, and its outcome kept per validity interval.

:data:`~veracity.index.sqlite.filter.REASONS_SQL` gives every document of the tenant
its first failed check. Two things make the step cheap enough to run before every
query (issue 17 asks ≤ 5 ms at 100k chunks):

- the query returns integer document keys, never the id strings (reading 5k id
  strings out of SQLite costs more than evaluating the predicate); ids come from a
  key → id table read once per index generation;
- the outcome depends on the moment only through which validity bounds it lies
  between. Between two consecutive bounds of the tenant's documents
  (``valid_from`` / ``valid_until`` values), every ``valid_from <= as_of <
  valid_until`` test has the same answer, so the outcome for ``(tenant, roles,
  version, interval)`` is computed once and reused until the index generation
  changes (any write does that) or it falls out of the bounded LRU.

The kept outcome is what the trace already holds: eligible document ids, the named
exclusions ``(source_id, document_id, reason)`` and a count of hidden documents.
No chunk text, no score, and no id of a hidden (role or tenant) document is kept.
"""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from itertools import repeat
from typing import Final

import apsw
import numpy as np
import numpy.typing as npt

from ...model.contracts import Document
from ...model.governance import HIDDEN_REASONS, EligibilityScope, EligibleDocuments
from .filter import reason_rows
from .records import moment_text, version_key
from .tables import IndexTables

__all__ = ["OUTCOMES_KEPT", "EligibilityStep"]

OUTCOMES_KEPT: Final = 256
"""Outcomes kept per index generation: one per (tenant, roles, version, validity interval)."""

_Key = tuple[str, tuple[str, ...], bool, str | None, str]


class EligibilityStep:
    """The SQL eligibility step of one index generation, with its outcomes kept.

    ``documents`` and ``doc_keys`` return the version's documents and their integer keys
    by id (the index state's, read once per generation): the keys the SQL returns are
    mapped back to ids and, for the named exclusions, source ids through them.
    """

    def __init__(
        self,
        connection: apsw.Connection,
        tables: IndexTables,
        documents: Callable[[], Mapping[str, Document]],
        doc_keys: Callable[[], Mapping[str, int]],
        *,
        keep: int = OUTCOMES_KEPT,
    ) -> None:
        self._conn = connection
        self._tables = tables
        self._documents = documents
        self._doc_keys = doc_keys
        self._keep = keep
        self._lock = threading.Lock()
        self._ids: tuple[npt.NDArray[np.object_], npt.NDArray[np.object_]] | None = None
        self._bounds: dict[str, list[str]] = {}
        self._outcomes: OrderedDict[_Key, EligibleDocuments] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def _ids_by_key(self) -> tuple[npt.NDArray[np.object_], npt.NDArray[np.object_]]:
        """Document ids and source ids at their keys' positions (``None`` where no key)."""
        if self._ids is None:
            documents, keys = self._documents(), self._doc_keys()
            size = max(keys.values(), default=-1) + 1
            ids, sources = np.full(size, None, dtype=object), np.full(size, None, dtype=object)
            for document_id, doc_key in keys.items():
                ids[doc_key] = document_id
                sources[doc_key] = documents[document_id].source_id
            self._ids = (ids, sources)
        return self._ids

    def _interval(self, tenant: str, as_of: str) -> str:
        """The last validity bound of ``tenant`` at or before ``as_of`` (``""`` if none)."""
        bounds = self._bounds.get(tenant)
        if bounds is None:
            documents = self._tables.documents
            bounds = self._bounds[tenant] = sorted(
                str(value)
                for (value,) in self._conn.execute(
                    f"SELECT valid_from FROM {documents} WHERE tenant = ?1 "
                    f"UNION SELECT valid_until FROM {documents} "
                    "WHERE tenant = ?1 AND valid_until IS NOT NULL",
                    (tenant,),
                )
            )
        at = bisect.bisect_right(bounds, as_of)
        return bounds[at - 1] if at else ""

    def outcome(self, scope: EligibilityScope) -> EligibleDocuments:
        """Eligible ids, named exclusions and the hidden count; equal to the reference filter's."""
        principal = scope.principal
        version = version_key(scope.version)  # raises VersionRangeError on a malformed version
        roles = tuple(sorted(principal.roles))
        with self._lock:
            key: _Key = (principal.tenant, roles, scope.roles_known, version,
                         self._interval(principal.tenant, moment_text(scope.as_of)))  # fmt: skip
            found = self._outcomes.get(key)
            if found is not None:
                self._outcomes.move_to_end(key)
                self.hits += 1
                return found
            self.misses += 1
            found = self.compute(scope)
            self._outcomes[key] = found
            if len(self._outcomes) > self._keep:
                self._outcomes.popitem(last=False)
            return found

    def compute(self, scope: EligibilityScope) -> EligibleDocuments:
        """The outcome computed afresh in SQL, neither read from nor added to what is kept."""
        groups, hidden = reason_rows(self._conn, self._tables, scope)
        ids, sources = self._ids_by_key()
        eligible: list[str] = []
        excluded: list[tuple[str, str, str]] = []
        for reason, keys in groups.items():
            if reason is None:
                eligible = ids[keys].tolist()
            elif reason in HIDDEN_REASONS:
                hidden += int(keys.size)
            else:
                excluded.extend(zip(sources[keys].tolist(), ids[keys].tolist(), repeat(str(reason))))
        excluded.sort()
        return EligibleDocuments(frozenset(eligible), tuple(excluded), hidden)
