"""Plain-JSON chunk records of the derived search index."""

from __future__ import annotations

import dataclasses
import json

from tests.catalog.builders import make_chunks, make_doc
from veracity.index.sqlite.records import chunk_from_json, chunk_to_json


def test_chunk_json_round_trip_keeps_pages() -> None:
    chunks = make_chunks(make_doc())
    assert [(c.page_start, c.page_end) for c in chunks] == [(None, None), (1, 2), (2, 3)]
    for chunk in chunks:
        assert chunk_from_json(chunk_to_json(chunk)) == chunk


def test_chunk_json_without_pages_is_as_before() -> None:
    unpaged = make_chunks(make_doc())[0]
    assert "page_start" not in json.loads(chunk_to_json(unpaged))
    paged = make_chunks(make_doc())[1]
    assert json.loads(chunk_to_json(paged))["page_start"] == 1


def test_records_written_before_pages_existed_load_with_none() -> None:
    chunk = make_chunks(make_doc())[2]
    record = json.loads(chunk_to_json(chunk))
    del record["page_start"], record["page_end"]
    assert chunk_from_json(json.dumps(record)) == dataclasses.replace(chunk, page_start=None, page_end=None)
