"""Cited PDF pages as pictures: the same checks as the cited chunk, a hidden document's page is 404."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.service.conftest import auth
from veracity.testing.pdf_builder import build_pdf

pytest.importorskip("pypdfium2", reason="page images need the ocr extra (pypdfium2, Pillow)")

VAULT = [[(18, "Vault backups", 720), (11, "Nightly snapshots are kept for 35 days in the vault.", 690)]]
PLAN = [[(18, "Vault roadmap", 720), (11, "The vault moves to a second region next year.", 690)]]


def upload(client, key: str, name: str, pages, metadata: dict | None = None) -> None:
    data = {"metadata": json.dumps(metadata)} if metadata else {}
    response = client.post(
        "/v1/documents", headers=auth(key), data=data,
        files=[("files", (name, build_pdf(pages), "application/pdf"))],
    )  # fmt: skip
    assert response.status_code == 200, response.text


def test_a_cited_page_is_a_picture_for_who_may_see_it(client) -> None:
    from PIL import Image

    client, keys = client
    upload(client, keys.operator, "vault.pdf", VAULT)
    upload(
        client,
        keys.operator,
        "roadmap.pdf",
        PLAN,
        {"visibility": "internal", "allowed_roles": ["maintainer"]},
    )
    later = (datetime.now(UTC) + timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    answer = client.post(
        "/v1/ask", json={"question": "How long are nightly snapshots kept in the vault?", "as_of": later},
        headers=auth(keys.public),
    ).json()  # fmt: skip
    cited = [c for c in answer["citations"] if c["source_id"] == "vault"]
    assert cited and cited[0]["boxes"], answer
    box = cited[0]["boxes"][0]
    assert 0 <= box["x0"] < box["x1"] <= 1 and 0 <= box["top"] < box["bottom"] <= 1
    picture = client.get(
        f"/v1/documents/vault/pages/{box['page']}.png?width=600&as_of={later}", headers=auth(keys.public)
    )
    assert picture.status_code == 200 and picture.headers["content-type"] == "image/png"
    with Image.open(io.BytesIO(picture.content)) as image:
        assert image.width == 600 and image.height > 600  # a portrait page
    assert (
        client.get(f"/v1/documents/vault/pages/2.png?as_of={later}", headers=auth(keys.public)).status_code
        == 404
    )
    assert client.get("/v1/documents/vault/pages/1.png").status_code == 401
    hidden = client.get(f"/v1/documents/roadmap/pages/1.png?as_of={later}", headers=auth(keys.public))
    assert hidden.status_code == 404 and "roadmap" not in hidden.text.replace("'roadmap'", "")
    assert (
        client.get(
            f"/v1/documents/roadmap/pages/1.png?as_of={later}", headers=auth(keys.maintainer)
        ).status_code
        == 200
    )
    other = client.get(f"/v1/documents/vault/pages/1.png?as_of={later}", headers=auth(keys.acme_public))
    assert other.status_code == 404  # another tenant's document: as if it did not exist
    client.post("/v1/documents/vault/withdraw", headers=auth(keys.operator))
    assert (
        client.get(f"/v1/documents/vault/pages/1.png?as_of={later}", headers=auth(keys.public)).status_code
        == 404
    )


def test_a_page_is_never_drawn_from_a_file_that_changed_since_it_was_read(client, served_kb) -> None:
    client, keys = client
    folder, _ = served_kb
    upload(client, keys.operator, "manual.pdf", VAULT, {"id": "device-manual"})
    later = (datetime.now(UTC) + timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    page = f"/v1/documents/device-manual/pages/1.png?as_of={later}"
    assert client.get(page, headers=auth(keys.public)).status_code == 200
    # another document may not take the stored file of this one (it replaced it, and its internal
    # page was drawn under this public document's citation)
    taken = client.post(
        "/v1/documents", headers=auth(keys.operator),
        data={"metadata": json.dumps({"id": "salary-table", "visibility": "internal"})},
        files=[("files", ("manual.pdf", build_pdf(PLAN), "application/pdf"))],
    )  # fmt: skip
    assert taken.status_code == 422 and "the stored file of document 'device-manual'" in taken.text
    assert client.get(page, headers=auth(keys.public)).status_code == 200
    # a file edited under it since it was read: not the bytes this revision came from, never drawn
    (folder / "uploads" / "starship" / "manual.pdf").write_bytes(build_pdf(PLAN))
    assert client.get(page, headers=auth(keys.public)).status_code == 404
