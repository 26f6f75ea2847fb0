"""Document routes take a source id with slashes (a file in a subfolder), raw or percent-encoded,
as well as the 64-hex document id; a document the key may not see stays 404."""

from __future__ import annotations

import json

import pytest

from tests.service.conftest import auth

NESTED = "pdf/tidewater-sla"


@pytest.fixture
def nested(client):
    """``(http, keys, document_id)`` with a document whose source id has a slash."""
    http, keys = client
    metadata = json.dumps({"id": NESTED, "valid_from": "2026-01-01T00:00:00Z"})
    note = b"# Tidewater SLA\n\nTidewater answers every ticket within four hours.\n"
    added = http.post(
        "/v1/documents",
        files=[("files", ("tidewater-sla.md", note, "text/markdown"))],
        data={"metadata": metadata},
        headers=auth(keys.operator),
    )
    assert added.status_code == 200 and added.json()["added"] == [NESTED], added.text
    shown = http.get(f"/v1/documents/{NESTED}", headers=auth(keys.operator))
    assert shown.status_code == 200, shown.text
    return http, keys, shown.json()["document_id"]


@pytest.mark.parametrize("spelled", [NESTED, "pdf%2Ftidewater-sla", "pdf%2ftidewater-sla"])
def test_a_source_id_with_a_slash_is_found_raw_and_encoded(nested, spelled) -> None:
    http, keys, document_id = nested
    shown = http.get(f"/v1/documents/{spelled}", headers=auth(keys.public))
    assert shown.status_code == 200 and shown.json()["id"] == NESTED
    chunk_id = shown.json()["chunks"][0]["chunk_id"]
    context = http.get(f"/v1/documents/{spelled}/chunks/{chunk_id}", headers=auth(keys.public))
    assert context.status_code == 200 and context.json()["chunk"]["chunk_id"] == chunk_id
    by_hash = http.get(f"/v1/documents/{document_id}", headers=auth(keys.public))
    assert by_hash.status_code == 200 and by_hash.json()["id"] == NESTED


@pytest.mark.parametrize("spelled", [NESTED, "pdf%2Ftidewater-sla"])
def test_operator_actions_take_a_source_id_with_a_slash(nested, spelled) -> None:
    http, keys, _ = nested
    operator = auth(keys.operator)
    assert http.post(f"/v1/documents/{spelled}/retire", headers=operator).json()["action"] == "retired"
    withdrawn = http.post(f"/v1/documents/{spelled}/withdraw", headers=operator)
    assert withdrawn.status_code == 200 and withdrawn.json()["id"] == NESTED
    assert http.get(f"/v1/documents/{spelled}", headers=auth(keys.public)).status_code == 404
    deleted = http.delete(f"/v1/documents/{spelled}", headers=operator)
    assert deleted.status_code == 200 and deleted.json()["action"] == "deleted"
    assert http.get(f"/v1/documents/{spelled}", headers=operator).status_code == 404


def test_a_nested_id_is_404_for_other_tenants_and_unknown_nested_ids(nested) -> None:
    http, keys, _ = nested
    assert http.get(f"/v1/documents/{NESTED}", headers=auth(keys.acme_operator)).status_code == 404
    assert http.post(f"/v1/documents/{NESTED}/withdraw", headers=auth(keys.acme_operator)).status_code == 404
    assert http.get("/v1/documents/pdf/no-such", headers=auth(keys.public)).status_code == 404
    assert http.post("/v1/documents/pdf/no-such/withdraw", headers=auth(keys.operator)).status_code == 404
    assert http.post(f"/v1/documents/{NESTED}/withdraw", headers=auth(keys.public)).status_code == 403


def test_the_openapi_paths_keep_their_names(client) -> None:
    http, _ = client
    paths = http.get("/openapi.json").json()["paths"]
    assert {"/v1/documents/{document_id}", "/v1/documents/{document_id}/withdraw"} <= set(paths)
    assert "/v1/documents/{document_id}/chunks/{chunk_id}" in paths


def test_an_uploaded_file_is_shown_by_its_uploaded_name_to_operators_too(nested) -> None:
    """The server keeps uploads in a folder of its own; no view shows that folder, the operator's
    explanation and document views included."""
    http, keys, _ = nested
    operator = auth(keys.operator)
    question = {"question": "How fast does Tidewater answer a ticket?", "explain": True}
    asked = http.post("/v1/ask", json=question, headers=operator).json()
    paths = {c["source_id"]: c["path"] for c in asked["explanation"]["candidates"]}
    assert paths[NESTED] == "tidewater-sla.md"
    shown = http.get(f"/v1/documents/{NESTED}", headers=operator).json()
    assert shown["path"] == "tidewater-sla.md"
    chunk_id = shown["chunks"][0]["chunk_id"]
    context = http.get(f"/v1/documents/{NESTED}/chunks/{chunk_id}", headers=operator).json()
    assert context["path"] == "tidewater-sla.md"
    listed = http.get("/v1/documents", headers=operator).json()["documents"]
    assert [d["path"] for d in listed if d["id"] == NESTED] == ["tidewater-sla.md"]
    assert "uploads" not in json.dumps([asked, shown, context, listed])
