"""Input the service must refuse as a client's mistake (422), never answer with a 500: a moment
UTC cannot hold in ``as_of``, and text JSON escapes into a lone surrogate."""

from __future__ import annotations

import json

import pytest

from tests.service.conftest import auth

OUTSIDE_UTC = ("0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00")
BODIES = [("/v1/ask", {"question": "席位"}), ("/v1/search", {"query": "席位"})]
SURROGATE = '"mid \\ud800"'  # JSON text: the escape reaches the server as written, unpaired


def events_of(text: str) -> list[tuple[str, dict]]:
    blocks = [block.split("\n", 1) for block in text.strip().split("\n\n")]
    return [(name.removeprefix("event: "), json.loads(data.removeprefix("data: "))) for name, data in blocks]


@pytest.mark.parametrize("moment", OUTSIDE_UTC)
@pytest.mark.parametrize(("path", "body"), BODIES)
def test_a_moment_outside_utc_in_a_body_is_422(client, moment: str, path: str, body: dict) -> None:
    http, keys = client
    answer = http.post(path, json={**body, "as_of": moment}, headers=auth(keys.public))
    assert answer.status_code == 422, answer.text
    refusal = answer.json()
    assert refusal["error"] == "ValidationError" and "out of the supported range" in refusal["detail"]


@pytest.mark.parametrize("moment", OUTSIDE_UTC)
def test_a_moment_outside_utc_listing_documents_is_422(client, moment: str) -> None:
    http, keys = client
    answer = http.get("/v1/documents", params={"as_of": moment}, headers=auth(keys.public))
    assert answer.status_code == 422, answer.text
    assert "out of the supported range" in answer.json()["detail"]


@pytest.mark.parametrize("moment", OUTSIDE_UTC)
def test_a_bad_moment_on_a_stream_is_422_before_the_stream_starts(client, moment: str) -> None:
    http, keys = client
    conversation = http.post("/v1/conversations", json={}, headers=auth(keys.public)).json()["id"]
    paths = ["/v1/ask/stream", f"/v1/conversations/{conversation}/ask/stream"]
    for path in paths:
        for as_of, problem in (("yesterday", "as_of"), (moment, "out of the supported range")):
            answer = http.get(path, params={"question": "席位", "as_of": as_of}, headers=auth(keys.public))
            assert answer.status_code == 422, (path, answer.text)  # no accepted stream that then fails
            assert answer.headers["content-type"].startswith("application/json")
            assert problem in answer.text
        empty_version = http.get(path, params={"question": "席位", "version": " "}, headers=auth(keys.public))
        assert empty_version.status_code == 422 and "version is empty" in empty_version.text
    turns = http.get(f"/v1/conversations/{conversation}", headers=auth(keys.public)).json()["turns"]
    assert turns == []  # a refused turn is not stored


@pytest.mark.parametrize(("path", "body"), BODIES)
def test_the_last_day_of_the_calendar_is_a_moment(client, path: str, body: dict) -> None:
    http, keys = client
    answer = http.post(path, json={**body, "as_of": "9999-12-31"}, headers=auth(keys.public))
    assert answer.status_code == 200, answer.text
    listed = http.get("/v1/documents", params={"as_of": "9999-12-31"}, headers=auth(keys.public))
    assert listed.status_code == 200, listed.text
    params = {"question": "席位", "as_of": "9999-12-31"}
    streamed = events_of(http.get("/v1/ask/stream", params=params, headers=auth(keys.public)).text)
    assert streamed[-1][0] == "done"


@pytest.mark.parametrize(
    ("path", "field", "body"),
    [
        ("/v1/ask", "question", f'{{"question": {SURROGATE}}}'),
        ("/v1/search", "query", f'{{"query": {SURROGATE}}}'),
        ("/v1/ask", "version", f'{{"question": "席位", "version": {SURROGATE}}}'),
        ("/v1/conversations", "title", f'{{"title": {SURROGATE}}}'),
    ],
)
def test_a_lone_surrogate_is_422_naming_the_field(client, path: str, field: str, body: str) -> None:
    http, keys = client
    headers = {**auth(keys.public), "content-type": "application/json"}
    answer = http.post(path, content=body.encode("utf-8"), headers=headers)
    assert answer.status_code == 422, answer.text
    refusal = answer.json()
    assert f"body.{field}" in refusal["detail"]
    assert "not valid Unicode (a lone surrogate, U+D800)" in refusal["detail"]
    # the input is echoed as its escape, so the refusal itself can be encoded
    assert refusal["errors"][0]["input"] == "mid \\ud800"


def test_a_lone_surrogate_in_a_new_key_is_422(client) -> None:
    http, keys = client
    headers = {**auth(keys.operator), "content-type": "application/json"}
    answer = http.post("/v1/keys", content=f'{{"roles": [{SURROGATE}]}}'.encode(), headers=headers)
    assert answer.status_code == 422, answer.text
    assert "not valid Unicode" in answer.json()["detail"]


def test_a_stream_that_fails_unexpectedly_ends_with_an_error_event(caplog) -> None:
    from veracity.service.api import INTERNAL_ERROR, sse

    def events():
        yield "accepted", {"question": "q"}
        raise RuntimeError("a bug, with /srv/secret/path in its message")

    with caplog.at_level("ERROR", logger="veracity.service.api"):
        sent = list(sse(events()))
    assert sent[0].startswith("event: accepted\n")
    assert sent[-1] == f"event: error\ndata: {json.dumps(INTERNAL_ERROR)}\n\n" and "secret" not in sent[-1]
    assert "a streamed answer failed" in caplog.text and "a bug" in caplog.text


def test_a_question_or_query_over_the_limit_is_422_on_every_route(client) -> None:
    from veracity.text.questions import MAX_QUESTION_CHARS

    http, keys = client
    long = "seat " * (MAX_QUESTION_CHARS // 5 + 1)  # over the limit, under the test server's body limit
    routes = [
        http.post("/v1/ask", json={"question": long}, headers=auth(keys.public)),
        http.post("/v1/search", json={"query": long}, headers=auth(keys.public)),
        http.get("/v1/ask/stream", params={"question": long}, headers=auth(keys.public)),
    ]
    conversation = http.post("/v1/conversations", json={}, headers=auth(keys.public)).json()["id"]
    routes.append(http.post(f"/v1/conversations/{conversation}/ask", json={"question": long},
                            headers=auth(keys.public)))  # fmt: skip
    for answer in routes:
        assert answer.status_code == 422, answer.text
        assert f"at most {MAX_QUESTION_CHARS:,} are taken" in answer.json()["detail"]


def test_a_body_value_of_the_wrong_type_is_422_and_a_numeric_version_says_to_quote_it(client) -> None:
    http, keys = client
    loose = http.post("/v1/ask", json={"question": "席位", "explain": "yes"}, headers=auth(keys.public))
    assert loose.status_code == 422, loose.text
    numeric = http.post("/v1/ask", json={"question": "席位", "version": 3.10}, headers=auth(keys.public))
    assert numeric.status_code == 422 and "write the version as a JSON string" in numeric.text
    quoted = http.post("/v1/ask", json={"question": "席位", "version": "3.10"}, headers=auth(keys.public))
    assert quoted.status_code == 200, quoted.text
