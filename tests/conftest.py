"""Shared fixtures: the demo knowledge base on the real default embedder and on the fake."""

from __future__ import annotations

import pytest

from veracity.fixtures import TenantConfig, tenant_config
from veracity.index.embedders import DEFAULT_EMBEDDER, FakeEmbedder, make_embedder
from veracity.model.contracts import Principal
from veracity.pipeline.engine import KnowledgeBase


@pytest.fixture(scope="session")
def config() -> TenantConfig:
    """The demo tenant's roles, defaults and running question."""
    return tenant_config()


@pytest.fixture(scope="session")
def demo_kb() -> KnowledgeBase:
    """The demo on the real default embedder (read-only: never mutate its catalog)."""
    return KnowledgeBase.demo(make_embedder(DEFAULT_EMBEDDER))


@pytest.fixture
def fake_kb() -> KnowledgeBase:
    """A private demo knowledge base on the fake embedder, free to mutate."""
    return KnowledgeBase.demo(FakeEmbedder())


@pytest.fixture(scope="session")
def public(config: TenantConfig) -> Principal:
    """A customer of the demo tenant."""
    return Principal.of(config.tenant, "public")


@pytest.fixture
def demo_kb_dir(tmp_path):
    """The demo written to an on-disk knowledge base on the fake embedder (closed: open it with open_kb)."""
    from veracity.kb.directory import init_demo_kb

    folder = tmp_path / "kb"
    init_demo_kb(folder, FakeEmbedder()).catalog.store.close()
    return folder


@pytest.fixture
def ask_public(config):
    """``ask_public(kb, question=…)``: the demo's public 3.2 user asks at the running question's moment."""

    def ask(kb: KnowledgeBase, question: str = "3.2 的 Team 能用 SAML 吗"):
        return kb.ask(question, Principal.of("starship", "public"), "3.2", config.as_of)

    return ask


@pytest.fixture(scope="session")
def served_template(tmp_path_factory):
    """The demo plus tenant acme, with keys, on the fake embedder (read-only: copy it to change it)."""
    from veracity.testing.tenants import build_served_kb

    folder = tmp_path_factory.mktemp("served") / "kb"
    keys = build_served_kb(folder, FakeEmbedder())
    return folder, keys


@pytest.fixture
def served_kb(served_template, tmp_path):
    """A private copy of the served template: ``(folder, keys)``, free to change."""
    import shutil

    folder, keys = served_template
    copy = tmp_path / "kb"
    shutil.copytree(folder, copy)
    return copy, keys
