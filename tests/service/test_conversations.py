"""Conversations over HTTP: follow-ups resolved against the turn before, owned by one key, and
history re-checked against the live catalog."""

from __future__ import annotations

from tests.service.conftest import auth

FIRST = "3.2 的 Team 计划能用 SAML 吗？"


def start(client, key: str, title: str | None = None) -> str:
    response = client.post("/v1/conversations", json={"title": title} if title else {}, headers=auth(key))
    assert response.status_code == 200, response.text
    return response.json()["id"]


def turn(client, key: str, conversation: str, question: str, **extra) -> dict:
    response = client.post(
        f"/v1/conversations/{conversation}/ask", json={"question": question, **extra}, headers=auth(key)
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_a_follow_up_takes_the_subject_of_the_turn_before(client) -> None:
    client, keys = client
    conversation = start(client, keys.public, "SSO")
    first = turn(client, keys.public, conversation, FIRST)
    assert first["turn"] == 1 and first["status"] == "answer" and first["carried"] == {}
    assert [c["source_id"] for c in first["citations"]] == ["faq-3.2-sso"]
    second = turn(client, keys.public, conversation, "那 Enterprise 计划呢？")
    assert second["turn"] == 2 and second["asked"] == "那 Enterprise 计划呢？"
    assert second["resolved_question"] == "3.2 的 Enterprise 计划能用 SAML 吗？"
    assert second["question"] == second["resolved_question"]  # asked as resolved, through every gate
    assert second["carried"] == {"subject": "Team 计划 → Enterprise 计划"}
    history = client.get(f"/v1/conversations/{conversation}", headers=auth(keys.public)).json()
    assert history["title"] == "SSO" and [t["turn"] for t in history["turns"]] == [1, 2]
    assert history["turns"][1]["resolved_question"] == second["resolved_question"]
    assert (
        history["turns"][0]["claims"] == first["claims"] and history["turns"][0]["withdrawn_citations"] == []
    )


def test_a_follow_up_that_switches_version(client) -> None:
    client, keys = client
    conversation = start(client, keys.public)
    first = turn(client, keys.public, conversation, FIRST, version="3.2")
    assert "faq-3.2-sso" in [c["source_id"] for c in first["citations"]]
    switched = turn(client, keys.public, conversation, "那 2.8 呢？")
    assert switched["resolved_question"] == "2.8 的 Team 计划能用 SAML 吗？" and switched["version"] == "2.8"
    assert "faq-3.2-sso" not in [c["source_id"] for c in switched["citations"]]  # 3.2's page is not 2.8's
    kept = turn(client, keys.public, conversation, "成员上限是多少？")
    assert kept["version"] == "2.8" and kept["carried"] == {"version": "2.8"}


def test_another_key_gets_404(client) -> None:
    client, keys = client
    conversation = start(client, keys.public)
    turn(client, keys.public, conversation, FIRST)
    for other in (keys.maintainer, keys.operator, keys.acme_public):  # same tenant or not
        assert client.get(f"/v1/conversations/{conversation}", headers=auth(other)).status_code == 404
        asked = client.post(
            f"/v1/conversations/{conversation}/ask", json={"question": "x"}, headers=auth(other)
        )
        assert asked.status_code == 404
    assert client.get("/v1/conversations/c_nope", headers=auth(keys.public)).status_code == 404
    assert client.get(f"/v1/conversations/{conversation}").status_code == 401
    empty = client.post(
        f"/v1/conversations/{conversation}/ask", json={"question": " "}, headers=auth(keys.public)
    )
    assert empty.status_code == 422


def test_a_withdrawn_citation_in_history_is_marked_and_its_claims_left_out(client) -> None:
    client, keys = client
    conversation = start(client, keys.public)
    first = turn(client, keys.public, conversation, FIRST)
    assert first["claims"] and all(claim["text"] for claim in first["claims"])
    withdrawn = client.post("/v1/documents/faq-3.2-sso/withdraw", headers=auth(keys.operator))
    assert withdrawn.status_code == 200, withdrawn.text
    history = client.get(f"/v1/conversations/{conversation}", headers=auth(keys.public)).json()
    (shown,) = history["turns"]
    cited = [c for c in shown["citations"] if c["source_id"] == "faq-3.2-sso"]
    assert cited and all(c["withdrawn"] and c["withdrawn_reason"] == "withdrawn" for c in cited)
    assert shown["withdrawn_citations"] == sorted(c["id"] for c in cited)
    resting = [
        claim for claim in shown["claims"] if set(claim["citations"]) & set(shown["withdrawn_citations"])
    ]
    assert resting and all(claim["withdrawn"] and claim["text"] is None for claim in resting)
    again = turn(client, keys.public, conversation, FIRST)  # a later turn never cites it
    assert "faq-3.2-sso" not in [c["source_id"] for c in again["citations"]]


def test_conversations_live_in_a_postgresql_knowledge_base(pg_url) -> None:
    from veracity.index.embedders import FakeEmbedder
    from veracity.model.errors import NotFoundError
    from veracity.service.core.conversations import Conversations
    from veracity.service.core.feedback import read_feedback
    from veracity.service.core.gateway import Gateway
    from veracity.testing.tenants import build_served_kb

    keys = build_served_kb(pg_url, FakeEmbedder())
    gate = Gateway.open(pg_url)
    talks = Conversations(gate)
    try:
        public = gate.admit(keys.public)
        conversation = talks.start(public)["id"]
        assert talks.ask(public, conversation, FIRST)["status"] == "answer"
        assert talks.ask(public, conversation, "那 2.8 呢？")["turn"] == 2
        assert [t["turn"] for t in talks.read(public, conversation)["turns"]] == [1, 2]
        talks.rate(public, conversation, 2, "down", "wrong version")
        (rated,) = read_feedback(pg_url)
        assert (rated[0].turn, rated[0].comment, rated[1].resolved) == (
            2,
            "wrong version",
            "2.8 的 Team 计划能用 SAML 吗？",
        )
        try:
            talks.read(gate.admit(keys.maintainer), conversation)
        except NotFoundError:
            pass
        else:
            raise AssertionError("another key read the conversation")
    finally:
        talks.close()
        gate.close()


def test_feedback_is_kept_with_the_turn_and_listed_for_operators(client, served_kb) -> None:
    import json

    from click.testing import CliRunner

    from veracity.cli.main import main
    from veracity.evaluate.cases import parse_cases
    from veracity.fixtures import tenant_config

    client, keys = client
    conversation = start(client, keys.public)
    first = turn(client, keys.public, conversation, FIRST)
    path = f"/v1/conversations/{conversation}/turns/1/feedback"
    rated = client.post(path, json={"rating": "down", "comment": "不是我问的计划"}, headers=auth(keys.public))
    assert rated.status_code == 200, rated.text
    assert client.post(path, json={"rating": "meh"}, headers=auth(keys.public)).status_code == 422
    assert client.post(path, json={"rating": "up"}, headers=auth(keys.maintainer)).status_code == 404
    missing = f"/v1/conversations/{conversation}/turns/9/feedback"
    assert client.post(missing, json={"rating": "up"}, headers=auth(keys.public)).status_code == 404
    assert client.get("/v1/feedback", headers=auth(keys.public)).status_code == 403
    listed = client.get("/v1/feedback?rating=down", headers=auth(keys.operator)).json()["feedback"]
    (item,) = listed
    every = client.get("/v1/feedback?rating=all", headers=auth(keys.operator)).json()["feedback"]
    assert every == client.get("/v1/feedback", headers=auth(keys.operator)).json()["feedback"] == listed
    assert (item["question"], item["rating"], item["comment"]) == (FIRST, "down", "不是我问的计划")
    assert [c["source_id"] for c in item["cited"]] == ["faq-3.2-sso"] and item["roles"] == ["public"]
    assert set(item["catalog_state"]) == {"index_generation", "catalog_revision"}
    assert (
        client.get("/v1/feedback", headers=auth(keys.acme_operator)).json()["feedback"] == []
    )  # its tenant only
    again = turn(client, keys.public, conversation, FIRST)  # feedback never changes an answer
    assert again["claims"] == first["claims"] and again["citations"] == first["citations"]

    folder, _ = served_kb
    runner = CliRunner()
    shown = runner.invoke(main, ["feedback", "list", "--kb", str(folder)], catch_exceptions=False)
    assert shown.exit_code == 0 and "不是我问的计划" in shown.output and "faq-3.2-sso" in shown.output
    out = folder.parent / "feedback.jsonl"
    exported = runner.invoke(main, ["feedback", "export", "--kb", str(folder), "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    (case,) = parse_cases(out.read_text(encoding="utf-8"), tenant_config())
    assert case.question == FIRST and case.tenant == "starship" and case.expected_status is None
    assert json.loads(out.read_text(encoding="utf-8"))["feedback"]["cited"] == ["faq-3.2-sso"]


def test_a_turn_streams_its_events_and_is_stored(client) -> None:
    import json

    client, keys = client
    conversation = start(client, keys.public)
    turn(client, keys.public, conversation, FIRST)
    with client.stream(
        "GET", f"/v1/conversations/{conversation}/ask/stream", params={"question": "那 2.8 呢？"},
        headers=auth(keys.public),
    ) as response:  # fmt: skip
        assert response.status_code == 200
        blocks = response.read().decode().strip().split("\n\n")
    events = [(b.split("\n")[0].removeprefix("event: "), json.loads(b.split("\n")[1].removeprefix("data: ")))
              for b in blocks]  # fmt: skip
    names = [name for name, _ in events]
    assert names[0] == "resolved" and names[-2:] == ["turn", "done"] and "status" in names
    assert events[0][1]["resolved_question"] == "2.8 的 Team 计划能用 SAML 吗？"
    assert events[-2][1] == {"conversation_id": conversation, "turn": 2}
    history = client.get(f"/v1/conversations/{conversation}", headers=auth(keys.public)).json()
    assert [t["resolved_question"] for t in history["turns"]][-1] == "2.8 的 Team 计划能用 SAML 吗？"
    other = client.get(
        f"/v1/conversations/{conversation}/ask/stream",
        params={"question": "x"},
        headers=auth(keys.maintainer),
    )
    assert other.status_code == 404


def test_a_later_turn_never_cites_what_the_key_may_no_longer_see(client) -> None:
    client, keys = client
    restricted = "2026 年 8 月的 SSO 故障是怎么回事？"
    conversation = start(client, keys.maintainer)
    first = turn(client, keys.maintainer, conversation, restricted)
    assert "incident-2026-08-sso" in [c["source_id"] for c in first["citations"]]
    page = (
        "---\nid: incident-2026-08-sso\ntitle: 事故记录\nvisibility: internal\nallowed_roles: [support]\n"
        "valid_from: 2026-08-01\n---\n\n# 事故记录\n\n2026 年 8 月的 SSO 故障由证书过期引起，已修复。\n"
    )  # the operator narrows it to support: the maintainer's role no longer reaches it
    uploaded = client.post(
        "/v1/documents",
        headers=auth(keys.operator),
        files=[("files", ("incident.md", page.encode(), "text/markdown"))],
    )
    assert uploaded.status_code == 200, uploaded.text
    later = turn(client, keys.maintainer, conversation, restricted)
    assert "incident-2026-08-sso" not in [c["source_id"] for c in later["citations"]]
    history = client.get(f"/v1/conversations/{conversation}", headers=auth(keys.maintainer)).json()
    (earlier, _) = history["turns"]
    gone = [c for c in earlier["citations"] if c["source_id"] == "incident-2026-08-sso"]
    assert gone and all(c["withdrawn"] and not c["title"] for c in gone)
    assert all(
        claim["text"] is None
        for claim in earlier["claims"]
        if set(claim["citations"]) & {c["id"] for c in gone}
    )


def test_a_turn_whose_document_was_revised_says_so_not_retired(client) -> None:
    client, keys = client
    later = "2026-12-31T00:00:00Z"

    def put(text: str) -> None:
        metadata = '{"valid_from": "2026-01-01T00:00:00Z"}'
        files = [("files", ("oncall.md", text.encode(), "text/markdown"))]
        response = client.post("/v1/documents", files=files, data={"metadata": metadata},
                               headers=auth(keys.operator))  # fmt: skip
        assert response.status_code == 200, response.text

    put("# 值班\n\n周末值班电话是 400-800-1234。\n\n## 恢复\n\n恢复需要两小时。\n")
    conversation = start(client, keys.public)
    first = turn(client, keys.public, conversation, "周末值班电话是多少？", as_of=later)
    assert [c["source_id"] for c in first["citations"]] == ["oncall"]
    put("# 值班\n\n周末值班电话是 400-800-1234。\n\n## 恢复\n\n恢复需要四小时。\n")  # another section
    shown = client.get(f"/v1/conversations/{conversation}", headers=auth(keys.public)).json()
    (citation,) = shown["turns"][0]["citations"]
    assert citation["withdrawn"] is True and citation["withdrawn_reason"] == "revised"
