"""``veracity kb copy``: a directory to PostgreSQL and back, keys and answers intact, nothing re-embedded."""

from __future__ import annotations

import json

from click.testing import CliRunner

from veracity.cli.main import main
from veracity.index.embedders import FakeEmbedder
from veracity.kb.copy import copy_kb
from veracity.kb.directory import open_kb
from veracity.kb.keys import authenticate
from veracity.kb.lifecycle import status_report
from veracity.model.contracts import Principal

QUESTIONS = ("3.2 的 Team 能用 SAML 吗", "怎么邀请成员", "Okta Keycloak Google Workspace 身份提供商")


def answers(location, config) -> list[tuple[str, list[str]]]:
    kb = open_kb(location)
    try:
        found = []
        for question in QUESTIONS:
            answer = kb.ask(question, Principal.of("starship", "public"), "3.2", config.as_of)
            found.append((answer.status, [c.chunk_id for c in answer.citations]))
        return found
    finally:
        kb.catalog.store.close()


def test_a_directory_to_postgresql_and_back(served_kb, pg_url, tmp_path, config) -> None:
    folder, keys = served_kb
    there = copy_kb(folder, pg_url)
    assert there.verification.passed and there.embedded == 0 and there.reused_vectors > 0
    assert there.rows["documents"] == 20 and there.rows["api_keys"] == 6
    back = copy_kb(pg_url, tmp_path / "back")
    assert back.verification.passed and back.embedded == 0 and back.rows == there.rows
    expected = answers(folder, config)
    assert answers(pg_url, config) == expected and answers(tmp_path / "back", config) == expected
    for location in (pg_url, tmp_path / "back"):  # the keys came along (salted digests)
        kb = open_kb(location)
        try:
            assert authenticate(kb.catalog.store, keys.acme_staff).tenant == "acme"
            report = status_report(kb, location)
            assert report["index"]["documents"] == 20 and report["index"]["verification_passed"] is True
        finally:
            kb.catalog.store.close()


def test_copy_with_another_model_re_embeds_and_the_cli_reports_it(demo_kb_dir, pg_url) -> None:
    result = CliRunner().invoke(main, ["kb", "copy", str(demo_kb_dir), pg_url, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["embedded"] == 0 and report["verification"]["passed"] is True
    refused = CliRunner().invoke(main, ["kb", "copy", str(demo_kb_dir), pg_url])
    assert refused.exit_code == 1 and "already holds a knowledge base" in refused.output
    other = copy_kb(pg_url, demo_kb_dir.parent / "other", embedder=FakeEmbedder(dim=64))
    assert (other.embedded, other.reused_vectors) == (73, 0)  # every chunk of the demo, with the new model
    reopened = open_kb(demo_kb_dir.parent / "other", FakeEmbedder(dim=64))
    assert other.verification.passed and reopened.snapshot.vector_model().dim == 64
