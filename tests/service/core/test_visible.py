"""Documents as a principal may see them: eligibility decides, existence never leaks."""

from __future__ import annotations

import pytest

from veracity.model.errors import NotFoundError
from veracity.service.core.gateway import Gateway
from veracity.service.core.visible import quote_spans, shown_path


@pytest.fixture(scope="module")
def gate(served_template):
    opened = Gateway.open(served_template[0])
    yield opened, served_template[1]
    opened.close()


def test_askers_see_what_they_could_be_cited_operators_their_whole_tenant(gate) -> None:
    gateway, keys = gate
    public = {row["id"] for row in gateway.documents(gateway.admit(keys.public))}
    maintainer = {row["id"] for row in gateway.documents(gateway.admit(keys.maintainer))}
    operator = {row["id"]: row for row in gateway.documents(gateway.admit(keys.operator))}
    assert "faq-3.2-sso" in public and "incident-2026-08-sso" not in public
    assert "incident-2026-08-sso" in maintainer
    assert "draft-member-removal" not in maintainer  # withdrawn: no asker sees it
    assert operator["draft-member-removal"]["status"] == "withdrawn" and len(operator) == 18
    assert not public & {"acme-returns", "acme-payroll"} and not set(operator) & {"acme-returns"}
    acme = {row["id"] for row in gateway.documents(gateway.admit(keys.acme_public))}
    assert acme == {"acme-returns"}


def test_a_hidden_document_and_a_missing_one_are_the_same_not_found(gate) -> None:
    gateway, keys = gate
    public = gateway.admit(keys.public)
    with pytest.raises(NotFoundError) as hidden:
        gateway.document(public, "incident-2026-08-sso")
    with pytest.raises(NotFoundError) as missing:
        gateway.document(public, "no-such-document")
    assert str(hidden.value).replace("incident-2026-08-sso", "X") == str(missing.value).replace(
        "no-such-document", "X"
    )
    with pytest.raises(NotFoundError):
        gateway.document(gateway.admit(keys.operator), "acme-payroll")  # another tenant, even for operators
    shown = gateway.document(gateway.admit(keys.maintainer), "incident-2026-08-sso")
    assert shown["title"].startswith("事故记录") and shown["chunks"][0]["text"]


def test_chunk_context_neighbours_and_the_quote(gate) -> None:
    gateway, keys = gate
    public = gateway.admit(keys.public)
    answer = gateway.ask(public, "3.2 的 Team 能用 SAML 吗").answer
    citation, claim = answer.citations[0], answer.claims[0]
    context = gateway.chunk_context(public, citation.document_id, citation.chunk_id, quote=claim.text)
    start, end = context["chunk"]["highlights"][0]
    assert context["chunk"]["text"][start:end] == claim.text
    assert context["title"] == "3.2 单点登录（SSO）常见问题" and len(context["after"]) == 1
    with pytest.raises(NotFoundError):
        gateway.chunk_context(public, "faq-3.2-sso", "0" * 64)
    incident = gateway.document(gateway.admit(keys.maintainer), "incident-2026-08-sso")
    with pytest.raises(NotFoundError):
        gateway.chunk_context(public, incident["document_id"], incident["chunks"][0]["chunk_id"])


def test_quote_spans_and_shown_paths() -> None:
    assert quote_spans("a b  c d", "b c") == [(2, 6)]
    assert quote_spans("abc", "") == [] and quote_spans("abc", "x") == []
    table = "| Plan | SLA |\n|---|---|\n| Team | 99.9% |\n| Enterprise | 99.95% |"
    row_claim = "| Plan | SLA |\n|---|---|\n| Enterprise | 99.95% |"  # a row claim carries its header
    assert quote_spans(table, row_claim) == [(0, 14), (15, 24), (42, 65)]
    assert quote_spans(table, "| Plan | SLA |\n| Basic | 1% |") == []
    assert shown_path("/srv/kb/uploads/acme/a.md") == "a.md" and shown_path("guide/a.md") == "guide/a.md"
