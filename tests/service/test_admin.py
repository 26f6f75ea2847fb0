"""Operator routes for keys and quarantine: one tenant's, an operator's only, secrets shown once."""

from __future__ import annotations

from tests.service.conftest import auth


def test_keys_are_created_listed_and_revoked_within_the_tenant(client) -> None:
    client, keys = client
    made = client.post("/v1/keys", json={"name": "bot", "roles": ["public"]}, headers=auth(keys.operator))
    assert made.status_code == 200, made.text
    key = made.json()
    assert key["secret"].startswith("vk_") and key["tenant"] == "starship" and key["roles"] == ["public"]
    assert client.post("/v1/ask", json={"question": "SSO?"}, headers=auth(key["secret"])).status_code == 200
    listed = client.get("/v1/keys", headers=auth(keys.operator)).json()["keys"]
    assert key["key_id"] in [k["key_id"] for k in listed] and all("secret" not in k for k in listed)
    assert {k["tenant"] for k in listed} == {"starship"}
    other = client.get("/v1/keys", headers=auth(keys.acme_operator)).json()["keys"]
    assert key["key_id"] not in [k["key_id"] for k in other]
    foreign = client.post(f"/v1/keys/{key['key_id']}/revoke", headers=auth(keys.acme_operator))
    assert foreign.status_code == 404
    assert client.get("/v1/keys", headers=auth(keys.public)).status_code == 403
    bad = client.post("/v1/keys", json={"roles": ["nobody"]}, headers=auth(keys.operator))
    assert bad.status_code == 422 and "defines no role 'nobody'" in bad.text  # the request, not the caller
    again = client.post("/v1/keys", json={"name": "bot", "roles": ["public"]}, headers=auth(keys.operator))
    assert again.status_code == 422 and "a key named 'bot' exists" in again.text
    revoked = client.post(f"/v1/keys/{key['key_id']}/revoke", headers=auth(keys.operator))
    assert revoked.status_code == 200 and revoked.json()["revoked_at"]
    assert client.post("/v1/ask", json={"question": "SSO?"}, headers=auth(key["secret"])).status_code == 401


def test_the_quarantine_lists_held_back_chunks_of_the_tenant(client) -> None:
    client, keys = client
    held = client.get("/v1/quarantine", headers=auth(keys.operator)).json()["chunks"]
    assert "community-qa-injection" in {c["id"] for c in held}
    assert all(c["signals"] and c["trust"] != "official" for c in held)
    acme = client.get("/v1/quarantine", headers=auth(keys.acme_operator)).json()["chunks"]
    assert "community-qa-injection" not in {c["id"] for c in acme}  # another tenant's text: never listed
    assert client.get("/v1/quarantine", headers=auth(keys.public)).status_code == 403
