"""Every error the service sends has one shape, ``{"error", "detail", "status"}``: library errors,
request validation (its field-level list in ``errors``), unknown routes, and a body that is not JSON."""

from __future__ import annotations

from tests.service.conftest import auth

ENVELOPE = {"error", "detail", "status"}


def test_a_request_validation_error_has_the_envelope_and_the_field_list(client) -> None:
    http, keys = client
    response = http.post("/v1/ask", json={"question": "x", "tenant": "acme"}, headers=auth(keys.public))
    data = response.json()
    assert response.status_code == 422 and ENVELOPE <= set(data) and data["status"] == 422
    assert data["error"] == "RequestValidationError"
    assert isinstance(data["detail"], str) and "tenant" in data["detail"]
    assert [e["loc"] for e in data["errors"]] == [["body", "tenant"]]
    missing = http.post("/v1/ask", json={}, headers=auth(keys.public)).json()
    assert missing["status"] == 422 and "question" in missing["detail"] and missing["errors"]
    query = http.get("/v1/documents/faq-3.2-sso/chunks/x", params={"around": 9}, headers=auth(keys.public))
    assert query.status_code == 422 and "around" in query.json()["detail"]
    broken = http.post(
        "/v1/ask", content=b"{", headers={**auth(keys.public), "Content-Type": "application/json"}
    )
    assert broken.status_code == 422 and ENVELOPE <= set(broken.json())


def test_unknown_routes_and_methods_have_the_envelope(client) -> None:
    http, keys = client
    unknown = http.get("/v1/nothing", headers=auth(keys.public))
    assert unknown.status_code == 404 and unknown.json() == {
        "error": "NotFoundError", "detail": "Not Found", "status": 404,
    }  # fmt: skip
    wrong = http.put("/v1/ask", headers=auth(keys.public))
    assert wrong.status_code == 405 and wrong.json()["status"] == 405 and "allow" in wrong.headers


def test_a_body_that_is_not_declared_json_is_refused_with_the_header_to_send(client) -> None:
    http, keys = client
    form = http.post("/v1/ask", data={"question": "x"}, headers=auth(keys.public))  # what curl -d sends
    assert form.status_code == 415 and ENVELOPE <= set(form.json())
    assert "Content-Type: application/json" in form.json()["detail"]
    assert "application/x-www-form-urlencoded" in form.json()["detail"]
    plain = {**auth(keys.public), "Content-Type": "text/plain"}
    search = http.post("/v1/search", content=b'{"query": "SAML"}', headers=plain)
    assert search.status_code == 415 and "Content-Type: application/json" in search.json()["detail"]


def test_a_json_body_without_a_content_type_is_read_as_json(client) -> None:
    http, keys = client
    body = b'{"query": "SAML"}'
    request = http.build_request("POST", "/v1/search", content=body, headers=auth(keys.public))
    assert "content-type" not in request.headers  # as curl sends raw bytes with --data-binary and -H ''
    response = http.send(request)
    assert response.status_code == 200 and response.json()["hits"]
    vendor = http.post(
        "/v1/search",
        content=b'{"query": "SAML"}',
        headers={**auth(keys.public), "Content-Type": "application/vnd.api+json; charset=utf-8"},
    )
    assert vendor.status_code == 200
