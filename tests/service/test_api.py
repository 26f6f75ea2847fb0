"""The HTTP API end to end through FastAPI's test client: identity from the key alone, statuses,
the same JSON as ``veracity ask --json``, scoped cache, tenant isolation, operator actions."""

from __future__ import annotations

import json

from tests.service.conftest import auth
from veracity.service.app import create_app
from veracity.service.core.gateway import Gateway, GatewaySettings
from veracity.service.core.rate_limits import RateLimit

RUNNING = (
    "我们正在使用 2.8 的 Team 计划和旧 SAML 单点登录。升级到 3.2 后，还能继续使用 SAML 吗？"
    "如果成员数超过新计划上限，多出来的成员会被自动删除吗？"
)
RESTRICTED = "2026 年 8 月的 SSO 故障是怎么回事？"
RESTRICTED_MARKS = ("incident-2026-08-sso", "事故记录", "身份网关", "证书")


def test_health_openapi_and_docs(client) -> None:
    http, _ = client
    assert http.get("/healthz").json() == {"status": "ok"}
    ready = http.get("/readyz")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    paths = http.get("/openapi.json").json()["paths"]
    for path in (
        "/v1/ask",
        "/v1/ask/stream",
        "/v1/search",
        "/v1/documents",
        "/v1/documents/{document_id}",
        "/v1/documents/{document_id}/withdraw",
        "/v1/status",
        "/v1/index/reindex",
        "/readyz",
    ):
        assert path in paths
    assert http.get("/docs").status_code == 200 and "veracity" in http.get("/").text


def test_no_key_a_bad_key_and_a_revoked_key_get_401(client, served_kb) -> None:
    http, keys = client
    body = {"question": RUNNING}
    missing = http.post("/v1/ask", json=body)
    assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
    assert http.post("/v1/ask", json=body, headers=auth("vk_nothing")).status_code == 401
    assert http.post("/v1/ask", json=body, headers={"Authorization": keys.public}).status_code == 401
    from veracity.kb.keys import revoke_key

    revoke_key(http.app.state.gateway.kb, "acme-public")
    assert http.get("/v1/documents", headers=auth(keys.acme_public)).status_code == 401


def test_ask_returns_the_cli_json_with_titles_and_cache(client) -> None:
    http, keys = client
    response = http.post("/v1/ask", json={"question": RUNNING}, headers=auth(keys.public))
    data = response.json()
    assert response.status_code == 200 and data["status"] == "answer" and data["cache"] == "miss"
    assert {
        "question",
        "status",
        "claims",
        "citations",
        "missing_fact_ids",
        "uncovered_subquestions",
        "reasons",
    } <= set(data)
    assert [c["source_id"] for c in data["citations"]] == ["faq-3.2-sso", "migration-2x-to-3.2"]
    first = data["citations"][0]
    assert first["title"] == "3.2 单点登录（SSO）常见问题" and first["heading_path"] and "pages" in first
    assert "trace" not in data
    again = http.post(
        "/v1/ask", json={"question": RUNNING, "explain": True}, headers=auth(keys.public)
    ).json()
    assert again["cache"] == "hit" and again["trace"]["cache"] == "hit"
    assert "excluded_hidden" not in again["trace"] and "explanation" not in again  # an asker's view
    operator = http.post("/v1/ask", json={"question": RUNNING, "explain": True}, headers=auth(keys.operator))
    assert "excluded_hidden" in operator.json()["trace"] and operator.json()["explanation"]["candidates"]


def test_nothing_a_request_says_widens_the_key(client) -> None:
    http, keys = client
    widened = {"question": RESTRICTED, "tenant": "starship", "roles": ["maintainer"]}
    assert http.post("/v1/ask", json=widened, headers=auth(keys.public)).status_code == 422
    headers = {**auth(keys.public), "X-Tenant": "acme", "X-Roles": "maintainer", "X-Role": "maintainer"}
    response = http.post("/v1/ask", json={"question": RESTRICTED, "explain": True}, headers=headers)
    data = response.json()
    assert data["status"] == "abstain" and data["trace"]["tenant"] == "starship"
    assert data["trace"]["roles"] == ["public"]
    assert data["reason_words"][0]["en"] == "nothing you may see covers this"
    assert not any(mark in response.text for mark in RESTRICTED_MARKS)
    assert (
        http.post("/v1/ask", json={"question": RESTRICTED}, headers=auth(keys.maintainer)).json()["status"]
        == "answer"
    )


def test_operator_endpoints_are_403_for_other_keys(client) -> None:
    http, keys = client
    public = auth(keys.public)
    assert http.get("/v1/status", headers=public).status_code == 403
    assert http.post("/v1/index/reindex", headers=public).status_code == 403
    assert http.post("/v1/documents/faq-3.2-sso/withdraw", headers=public).status_code == 403
    assert http.post("/v1/documents/faq-3.2-sso/retire", headers=public).status_code == 403
    assert http.delete("/v1/documents/faq-3.2-sso", headers=public).status_code == 403
    upload = http.post("/v1/documents", files={"files": ("a.md", b"# A\n\ntext")}, headers=public)
    assert upload.status_code == 403


def test_documents_the_key_may_not_see_are_404_like_missing_ones(client) -> None:
    http, keys = client
    public, maintainer = auth(keys.public), auth(keys.maintainer)
    hidden = http.get("/v1/documents/incident-2026-08-sso", headers=public)
    missing = http.get("/v1/documents/no-such-doc", headers=public)
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json()["detail"].replace("incident-2026-08-sso", "X") == missing.json()["detail"].replace(
        "no-such-doc", "X"
    )
    assert http.get("/v1/documents/incident-2026-08-sso", headers=maintainer).status_code == 200
    listing = http.get("/v1/documents", headers=public).text
    assert not any(mark in listing for mark in RESTRICTED_MARKS)
    # what an ask takes when it names no version or moment: the tenant's recorded defaults, if any
    assert json.loads(listing)["defaults"] == {"version": "3.2", "as_of": "2026-08-27T16:00:00Z"}
    acme = http.get("/v1/documents", headers=auth(keys.acme_public)).json()
    assert acme["defaults"] == {"version": None, "as_of": None}  # every version, now


def test_tenants_are_isolated_across_keys(client) -> None:
    http, keys = client
    acme, starship = auth(keys.acme_staff), auth(keys.operator)
    assert {d["id"] for d in http.get("/v1/documents", headers=acme).json()["documents"]} == {
        "acme-returns",
        "acme-payroll",
    }
    question = {"question": "Which day does Acme pay salaries?"}
    payroll = http.post("/v1/ask", json=question, headers=acme).json()
    assert payroll["status"] == "answer" and "ZEBRA-42" in payroll["claims"][0]["text"]
    for key in (keys.acme_public, keys.public, keys.maintainer, keys.operator):
        other = http.post("/v1/ask", json={**question, "explain": True}, headers=auth(key))
        assert other.json()["status"] == "abstain" and "ZEBRA" not in other.text
        assert "acme-payroll" not in other.text
    assert http.get("/v1/documents/acme-payroll", headers=starship).status_code == 404
    assert http.post("/v1/documents/acme-payroll/withdraw", headers=starship).status_code == 404
    assert http.get("/v1/documents/acme-payroll", headers=auth(keys.acme_public)).status_code == 404
    search = http.post("/v1/search", json={"query": "ZEBRA payroll salaries"}, headers=auth(keys.acme_public))
    assert search.json()["hits"] == [] or all(h["id"] == "acme-returns" for h in search.json()["hits"])
    assert all(
        h["id"].startswith("acme-")
        for h in http.post("/v1/search", json={"query": "salaries"}, headers=acme).json()["hits"]
    )


def test_withdraw_changes_the_catalog_revision_and_no_cached_answer_outlives_it(client) -> None:
    http, keys = client
    body = {"question": RUNNING}
    assert http.post("/v1/ask", json=body, headers=auth(keys.public)).json()["cache"] == "miss"
    assert http.post("/v1/ask", json=body, headers=auth(keys.public)).json()["cache"] == "hit"
    before = http.get("/v1/status", headers=auth(keys.operator)).json()
    change = http.post("/v1/documents/faq-3.2-sso/withdraw", headers=auth(keys.operator)).json()
    assert change["action"] == "withdrawn" and change["id"] == "faq-3.2-sso" and change["changed"] is True
    again = http.post("/v1/documents/faq-3.2-sso/withdraw", headers=auth(keys.operator)).json()
    assert again["changed"] is False and again["catalog_revision"] == change["catalog_revision"]
    after = http.post("/v1/ask", json=body, headers=auth(keys.public)).json()
    assert after["cache"] == "miss" and "faq-3.2-sso" not in [c["source_id"] for c in after["citations"]]
    status = http.get("/v1/status", headers=auth(keys.operator)).json()
    assert status["catalog_revision"] > before["catalog_revision"]
    assert status["cache"]["hits"] == 1 and status["cache"]["mean_hit_ms"] < status["cache"]["mean_miss_ms"]
    assert status["documents"]["withdrawn"] == before["documents"]["withdrawn"] + 1
    assert "acme" not in json.dumps(status["documents"])
    assert http.get("/v1/documents/faq-3.2-sso", headers=auth(keys.public)).status_code == 404


def test_stream_sends_status_claims_citations_done(client) -> None:
    http, keys = client
    with http.stream("GET", "/v1/ask/stream", params={"question": RUNNING}, headers=auth(keys.public)) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        text = "".join(r.iter_text())
    events = [block.split("\n")[0].removeprefix("event: ") for block in text.strip().split("\n\n")]
    assert events == ["accepted", "status", "claim", "claim", "citation", "citation", "done"]
    claim = json.loads(text.split("event: claim\ndata: ")[1].split("\n")[0])
    assert claim["number"] == 1 and claim["citations"] == [1]
    refused = http.get("/v1/ask/stream", params={"question": " "}, headers=auth(keys.public))
    assert refused.status_code == 422 and "question is empty" in refused.json()["detail"]  # before a stream


def test_search_returns_permitted_ranked_chunks(client) -> None:
    http, keys = client
    hits = http.post(
        "/v1/search", json={"query": "SSO 故障 证书", "limit": 5}, headers=auth(keys.public)
    ).json()
    assert hits["hits"] and all(h["id"] != "incident-2026-08-sso" for h in hits["hits"])
    assert [h["rank"] for h in hits["hits"]] == list(range(1, len(hits["hits"]) + 1))
    two = http.post("/v1/search", json={"query": "SAML", "limit": 2}, headers=auth(keys.public))
    assert len(two.json()["hits"]) == 2  # the limit counts every trust tier together
    maintainer = http.post(
        "/v1/search", json={"query": "SSO 故障 证书"}, headers=auth(keys.maintainer)
    ).json()
    assert maintainer["hits"][0]["id"] == "incident-2026-08-sso" and maintainer["hits"][0]["text"]


def test_chunk_context_for_a_citation(client) -> None:
    http, keys = client
    data = http.post("/v1/ask", json={"question": RUNNING}, headers=auth(keys.public)).json()
    citation, claim = data["citations"][0], data["claims"][0]
    url = f"/v1/documents/{citation['document_id']}/chunks/{citation['chunk_id']}"
    context = http.get(url, params={"quote": claim["text"]}, headers=auth(keys.public)).json()
    start, end = context["chunk"]["highlights"][0]
    assert context["chunk"]["text"][start:end] == claim["text"] and context["title"] == citation["title"]


def test_upload_ingests_for_the_operator_tenant_with_the_cli_rejections(client) -> None:
    http, keys = client
    operator = auth(keys.operator)
    note = "# 星舟值班表\n\n周末值班电话是 400-800-1234，工作日请走工单。\n".encode()
    metadata = json.dumps({"valid_from": "2026-01-01T00:00:00Z", "title": "值班表"})
    added = http.post(
        "/v1/documents",
        files=[("files", ("oncall.md", note, "text/markdown"))],
        data={"metadata": metadata},
        headers=operator,
    )
    assert added.status_code == 200 and added.json()["added"] == ["oncall"]
    answer = http.post("/v1/ask", json={"question": "周末值班电话是多少？"}, headers=auth(keys.public)).json()
    assert answer["status"] == "answer" and answer["citations"][0]["source_id"] == "oncall"
    assert answer["citations"][0]["path"] == "oncall.md"  # the file name, never the server path
    foreign = http.post(
        "/v1/documents",
        files={"files": ("x.md", b"# X\n\nsome text here")},
        data={"metadata": json.dumps({"tenant": "acme"})},
        headers=operator,
    )
    assert foreign.status_code == 422 and "acme" in foreign.json()["rejected"][0]["reason"]
    assert "/" not in foreign.json()["rejected"][0]["file"]
    roles = http.post(
        "/v1/documents", files={"files": ("tenant.yaml", b"tenant: starship\nroles: [x]")}, headers=operator
    )
    assert roles.status_code == 422 and "tenant.yaml" in roles.json()["detail"]
    assert (
        http.post(
            "/v1/documents", files={"files": ("a.md", b"x")}, data={"metadata": "{"}, headers=operator
        ).status_code
        == 422
    )
    assert http.get("/v1/documents/oncall", headers=auth(keys.acme_operator)).status_code == 404
    nobody = http.post(
        "/v1/documents",
        files={"files": ("locked.md", "# 锁定\n\n只有审计员能看。".encode())},
        data={"metadata": json.dumps({"visibility": "internal", "allowed_roles": ["auditor"]})},
        headers=operator,
    )
    assert nobody.status_code == 200
    assert nobody.json()["undefined_roles"] == [{"id": "locked", "roles": ["auditor"]}]


def test_a_document_uploaded_without_a_date_answers_at_once(client) -> None:
    """Its valid_from defaults to the upload's minute, which the service's "now" (its minute) has
    reached: asked at once, it answers (tenant acme records no moment of its own to ask at)."""
    http, keys = client
    note = b"# Spare parts store\n\nThe spare parts store is open from 9:00 to 17:00 every day.\n"
    upload = [("files", ("spares.md", note, "text/markdown"))]
    added = http.post("/v1/documents", files=upload, headers=auth(keys.acme_operator))
    assert added.status_code == 200 and added.json()["added"] == ["spares"]
    question = {"question": "When is the spare parts store open?"}
    answer = http.post("/v1/ask", json=question, headers=auth(keys.acme_public)).json()
    assert answer["status"] == "answer" and answer["citations"][0]["source_id"] == "spares"


def test_delete_and_retire(client) -> None:
    http, keys = client
    operator = auth(keys.operator)
    assert http.post("/v1/documents/plans-3.2/retire", headers=operator).json()["action"] == "retired"
    deleted = http.delete("/v1/documents/security-3.2-public", headers=operator).json()
    assert deleted["action"] == "deleted" and deleted["chunks_removed"] > 0
    assert http.get("/v1/documents/security-3.2-public", headers=operator).status_code == 404
    assert http.delete("/v1/documents/security-3.2-public", headers=operator).status_code == 404


def test_request_size_and_rate_limits(client, served_kb) -> None:
    http, keys = client
    big = {"question": "x" * 5000}
    too_large = http.post("/v1/ask", json=big, headers=auth(keys.public))
    assert too_large.status_code == 413 and too_large.json()["error"] == "RequestTooLargeError"
    upload = http.post(
        "/v1/documents", files={"files": ("big.md", b"# B\n\n" + b"x" * 70_000)}, headers=auth(keys.operator)
    )
    assert upload.status_code == 413
    from fastapi.testclient import TestClient

    gateway = Gateway.open(
        served_kb[0], settings=GatewaySettings(rate_limit=RateLimit(per_minute=6, burst=2))
    )
    with TestClient(create_app(gateway)) as limited:
        codes = [limited.get("/v1/documents", headers=auth(keys.public)).status_code for _ in range(3)]
        assert codes == [200, 200, 429]
        refused = limited.get("/v1/documents", headers=auth(keys.public))
        assert int(refused.headers["retry-after"]) >= 1
        assert limited.get("/v1/documents", headers=auth(keys.maintainer)).status_code == 200
