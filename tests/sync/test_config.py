"""The sources file: every kind read and checked; each mistake named with its source and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from veracity.parse.errors import IngestError
from veracity.sync.config import load_sources, parse_sources
from veracity.sync.run import selected

FULL = """
sources:
  - name: handbook
    folder: ./handbook
    tenant: acme
    include: ["**/*.md"]
    exclude: drafts/**
    governance: {visibility: internal, allowed_roles: [staff], trust: official, version_min: "3.0"}
    on_remove: delete
    schedule: hourly
  - name: product-docs
    git: https://git.example.com/docs.git
    ref: v3.2
    path: docs
  - name: site
    site: https://docs.example.com/
    start: [https://docs.example.com/guide/]
    sitemap: https://docs.example.com/sitemap.xml
    max_pages: 50
    delay: 0
"""


def test_every_kind_is_read(tmp_path: Path) -> None:
    handbook, docs, site = parse_sources(FULL, base=tmp_path)
    assert (handbook.kind, handbook.location, handbook.tenant) == (
        "folder",
        str(tmp_path / "handbook"),
        "acme",
    )
    assert handbook.include == ("**/*.md",) and handbook.exclude == ("drafts/**",)
    assert dict(handbook.governance)["allowed_roles"] == ["staff"]
    assert (handbook.on_remove, handbook.schedule) == ("delete", "hourly")
    assert (docs.kind, docs.location, docs.option("ref"), docs.option("path")) == (
        "git", "https://git.example.com/docs.git", "v3.2", "docs",
    )  # fmt: skip
    assert site.option("start") == ("https://docs.example.com/", "https://docs.example.com/guide/")
    assert (site.option("max_pages"), site.option("delay")) == (50, 0)
    assert docs.on_remove == "withdraw" and docs.tenant is None


def test_governance_enters_the_fingerprint_digest(tmp_path: Path) -> None:
    one = parse_sources("sources:\n  - {name: a, folder: x, governance: {trust: community}}", base=tmp_path)[
        0
    ]
    two = parse_sources("sources:\n  - {name: a, folder: x, governance: {trust: official}}", base=tmp_path)[0]
    other_tenant = parse_sources("sources:\n  - {name: a, folder: x, tenant: t}", base=tmp_path)[0]
    digests = {one.governance_digest, two.governance_digest, other_tenant.governance_digest}
    assert len(digests) == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sources: []", "non-empty list under 'sources:'"),
        ("other: 1\nsources: [{name: a, folder: x}]", "unknown top-level keys: other"),
        ("sources: [{folder: x}]", "needs a name"),
        ("sources: [{name: 'a b', folder: x}]", "needs a name"),
        ("sources: [{name: a}]", "source 'a': needs exactly one of folder, git, site"),
        ("sources: [{name: a, folder: x, git: y}]", "needs exactly one of folder, git, site"),
        ("sources: [{name: a, folder: x, ref: main}]", "unknown keys for a folder source: ref"),
        ("sources: [{name: a, folder: x}, {name: a, folder: y}]", "repeated: a"),
        ("sources: [{name: a, folder: x, on_remove: erase}]", "'on_remove': must be withdraw or delete"),
        ("sources: [{name: a, folder: x, governance: {trust: high}}]", "trust must be one of official"),
        ("sources: [{name: a, folder: x, governance: {id: z}}]", "'id' is not a field a source can default"),
        ("sources: [{name: a, folder: x, governance: {valid_from: soon}}]", "'valid_from': cannot parse"),
        ("sources: [{name: a, folder: x, governance: {version_min: v3}}]", "'version_min': malformed"),
        ("sources: [{name: a, site: 'ftp://x'}]", "is not an http(s) URL"),
        ("sources: [{name: a, site: 'https://x/', max_pages: 0}]", "'max_pages': must be an integer ≥ 1"),
        ("sources: [{name: a, site: 'https://x/', delay: -1}]", "'delay': must be a number ≥ 0"),
        ("sources: [{name: a, folder: x, include: [1]}]", "'include': must be a string or a list"),
        ("sources: [{name: &n a, folder: x}]", "anchor"),
        ("sources: [", "is not valid YAML"),
        ("sources: [{name: a, git: '--upload-pack=x'}]", "starts with '-'"),
        ("sources: [{name: a, git: repo, ref: '--output=x'}]", "'ref': must not start with '-'"),
    ],
)
def test_mistakes_are_named(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(IngestError, match=None) as caught:
        parse_sources(text, base=tmp_path)
    assert message in str(caught.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no such sources file"):
        load_sources(tmp_path / "veracity.yaml")


def test_globs_select_paths(tmp_path: Path) -> None:
    (spec,) = parse_sources(
        "sources: [{name: a, folder: x, include: ['**/*.md'], exclude: ['drafts/**']}]", base=tmp_path
    )
    assert selected(spec, "top.md") and selected(spec, "guide/a.md")
    assert not selected(spec, "drafts/b.md") and not selected(spec, "image.png")
