"""Plain-JSON chunk records of the derived search index."""

from __future__ import annotations

import dataclasses
import json

from tests.catalog.builders import make_chunks, make_doc
from veracity.index.sqlite.records import (
    chunk_from_json,
    chunk_to_json,
    current_chunk_record,
    embedded_text_digest,
    record_text_digest,
)


def _from_catalog(chunk):
    """What a reader gets: the record, with the text and prefix of the chunk's catalog row."""
    return chunk_from_json(chunk_to_json(chunk), chunk.text, chunk.context_prefix)


def _old_record(chunk) -> str:
    """A record as index versions wrote it before the text left the index."""
    record = json.loads(chunk_to_json(chunk))
    del record["indexed_digest"]
    record.update(text=chunk.text, context_prefix=chunk.context_prefix)
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def test_chunk_json_round_trip_keeps_pages() -> None:
    chunks = make_chunks(make_doc())
    assert [(c.page_start, c.page_end) for c in chunks] == [(None, None), (1, 2), (2, 3)]
    for chunk in chunks:
        assert _from_catalog(chunk) == chunk


def test_chunk_record_holds_no_text_only_its_digest() -> None:
    chunk = dataclasses.replace(make_chunks(make_doc())[0], context_prefix="安装指南")
    record = json.loads(chunk_to_json(chunk))
    assert "text" not in record and "context_prefix" not in record
    assert chunk.text not in chunk_to_json(chunk) and "安装指南" not in chunk_to_json(chunk)
    assert record["indexed_digest"] == embedded_text_digest(chunk) == record_text_digest(chunk_to_json(chunk))


def test_text_the_catalog_no_longer_has_is_never_invented() -> None:
    chunk = make_chunks(make_doc())[1]
    record = chunk_to_json(chunk)
    gone = chunk_from_json(record, None, None)  # the catalog row was deleted
    changed = chunk_from_json(record, chunk.text + " edited", chunk.context_prefix)
    other_prefix = chunk_from_json(record, chunk.text, "another prefix")
    for stale in (gone, changed, other_prefix):
        assert (stale.text, stale.context_prefix) == ("", "")
        assert stale == dataclasses.replace(chunk, text="", context_prefix="")
        assert stale.content_digest != chunk.content_digest  # the return gate's chunk check drops it


def test_a_record_written_with_its_text_still_reads() -> None:
    chunk = dataclasses.replace(make_chunks(make_doc())[1], context_prefix="前缀")
    old = _old_record(chunk)
    assert chunk_from_json(old) == chunk
    assert chunk_from_json(old, "other catalog text", "x") == chunk  # its own copy wins
    assert record_text_digest(old) == embedded_text_digest(chunk)
    assert current_chunk_record(old) == chunk_to_json(chunk)
    assert current_chunk_record(chunk_to_json(chunk)) == chunk_to_json(chunk)


def test_chunk_json_without_pages_is_as_before() -> None:
    unpaged = make_chunks(make_doc())[0]
    assert "page_start" not in json.loads(chunk_to_json(unpaged))
    paged = make_chunks(make_doc())[1]
    assert json.loads(chunk_to_json(paged))["page_start"] == 1


def test_records_written_before_pages_existed_load_with_none() -> None:
    chunk = make_chunks(make_doc())[2]
    record = json.loads(chunk_to_json(chunk))
    del record["page_start"], record["page_end"]
    expected = dataclasses.replace(chunk, page_start=None, page_end=None)
    assert chunk_from_json(json.dumps(record), chunk.text, chunk.context_prefix) == expected
