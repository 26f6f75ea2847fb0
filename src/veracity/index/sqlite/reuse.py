"""Vectors a new revision can reuse instead of embedding its chunks again.

Editing one line of a long document makes a new revision whose chunks are
almost all the old ones: same text, same context prefix, so the same vector.
:func:`reusable_vectors` finds, in one index version, the stored vectors of
the other revisions of the same sources and keys them by the digest of the
exact text the embedder saw (:func:`veracity.index.snapshot.index_text`:
prefix and chunk text), which each chunk record keeps. The vectors are the version's own model's (one model
per version), so a digest match is a vector match.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import apsw
import numpy as np
import numpy.typing as npt

from ...catalog.sql import all_rows
from ...model.contracts import Document
from .records import record_text_digest
from .tables import IndexTables
from .vectors import fetch_vectors
from .writer import VectorModel

__all__ = ["reusable_vectors"]


def reusable_vectors(
    connection: apsw.Connection,
    tables: IndexTables,
    model: VectorModel,
    documents: Sequence[Document],
    wanted: Iterable[str],
) -> dict[str, npt.NDArray[np.float32]]:
    """Embedded-text digest → stored vector, for the ``wanted`` digests found in other revisions.

    Looks only at documents of the same tenant and source id as ``documents``
    (other than themselves) that this index version holds.
    """
    wanted = set(wanted)
    if not documents or not wanted:
        return {}
    sources = sorted({(d.tenant, d.source_id) for d in documents})
    own = {d.document_id for d in documents}
    siblings = [
        str(document_id)
        for document_id, tenant, source_id in all_rows(
            connection,
            "SELECT document_id, tenant, source_id FROM documents "
            "WHERE source_id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted({source for _, source in sources}), ensure_ascii=False),),
        )
        if (tenant, source_id) in sources and document_id not in own
    ]
    if not siblings:
        return {}
    keys: dict[str, int] = {}
    for chunk_key, record in all_rows(
        connection,
        f"SELECT c.chunk_key, c.record FROM {tables.chunks} AS c JOIN {tables.documents} AS d "
        "USING (doc_key) WHERE d.document_id IN (SELECT value FROM json_each(?))",
        (json.dumps(siblings),),
    ):
        digest = record_text_digest(str(record))
        if digest in wanted:
            keys.setdefault(digest, int(chunk_key))
    if not keys:
        return {}
    found, matrix = fetch_vectors(connection, model.table, sorted(keys.values()), model.dim)
    by_key = {int(key): matrix[row] for row, key in enumerate(found.tolist())}
    return {digest: by_key[key] for digest, key in keys.items() if key in by_key}
