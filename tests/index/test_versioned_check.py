"""is_versioned says what isinstance(·, VersionedIndex) says, without running the index's properties.

On Python 3.11 the isinstance check calls every property of the protocol; the SQLite index's
``documents`` loads every indexed document, which the manifest write after each ingest,
withdraw and delete paid for.
"""

from __future__ import annotations

import typing
from pathlib import Path

from tests.index.backend_contract import corpus
from veracity.catalog.sqlite import SQLiteStore
from veracity.index.embedders import FakeEmbedder
from veracity.index.snapshot import IndexSnapshot
from veracity.index.sqlite.search import SQLiteSearchIndex
from veracity.index.versioned import VersionedIndex, _protocol_members, is_versioned


class _PropertiesRefuse(SQLiteSearchIndex):
    """A SQLite index whose bulk properties fail when read."""

    @property
    def documents(self):  # type: ignore[override]
        raise AssertionError("documents read")

    @property
    def document_ids_by_trust(self):  # type: ignore[override]
        raise AssertionError("document_ids_by_trust read")


def test_the_members_are_the_protocol_s() -> None:
    assert _protocol_members(VersionedIndex) == set(typing._get_protocol_attrs(VersionedIndex))  # type: ignore[attr-defined]


def test_it_agrees_with_isinstance(tmp_path: Path) -> None:
    index = SQLiteSearchIndex(SQLiteStore(tmp_path / "kb.sqlite"))
    snapshot = IndexSnapshot.build(corpus(), FakeEmbedder())
    for candidate in (index, snapshot, object(), None):
        assert is_versioned(candidate) == isinstance(candidate, VersionedIndex)
    assert is_versioned(index) and not is_versioned(snapshot)


def test_it_reads_no_property(tmp_path: Path) -> None:
    index = _PropertiesRefuse(SQLiteStore(tmp_path / "kb.sqlite"))
    assert is_versioned(index)
