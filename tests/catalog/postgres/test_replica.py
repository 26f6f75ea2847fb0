"""A streaming read replica of the embedded server: asks read it, writes go to the primary,
and a document withdrawn on the primary is never cited once the withdraw has returned.

One replica of the session's server for the module (``start_replica`` in a temporary
folder); the knowledge base is one-paragraph documents, each with a question only it
answers: one per try, and one for each other test, so no test depends on another's
withdraws. The replica lag is printed (``-s`` shows it). The test of a replica that is
down stops it and starts it again on the same port.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from veracity.catalog.postgres.server import EmbeddedServer
from veracity.model.errors import ConfigError, ReplicaLagError, ReplicaUnavailableError

TRIES = 100
PAUSED = TRIES  # the document the lagging-replica test withdraws
ASKED = TRIES + 1  # the one the command line asks
DOWN = TRIES + 2  # the one asked while the replica is down
ONCE = TRIES + 3  # the one whose ask counts its waits
DOCUMENTS = TRIES + 4
TENANT = "acme"


def _question(i: int) -> str:
    return f"What is the door code of locker {4000 + i}?"


@pytest.fixture(scope="module")
def replica(pg_server: EmbeddedServer) -> Iterator[EmbeddedServer]:
    from veracity.catalog.postgres.server import start_replica, stop_server

    server = start_replica(pg_server.data_dir, tempfile.mkdtemp(prefix="veracity-replica-"))
    yield server
    stop_server(server, remove=True)


@pytest.fixture(scope="module")
def lockers(
    pg_server: EmbeddedServer, replica: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str, str]]:
    """``(primary URL, replica URL as a reader role, operator key)`` of the lockers' knowledge base."""
    import uuid

    import psycopg

    from veracity.index.embedders import FakeEmbedder
    from veracity.kb.keys import create_key
    from veracity.kb.local import open_local

    name = f"t_replica_{uuid.uuid4().hex[:8]}"
    role = f"asker_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = pg_server.url(name)
    sources = tmp_path_factory.mktemp("lockers")
    for i in range(DOCUMENTS):
        number = 4000 + i
        (sources / f"locker-{i:03d}.md").write_text(  # valid from a past moment: the service asks
            f"---\nvalid_from: 2026-01-01T00:00:00Z\n---\n\n"  # as of now to the minute
            f"# Locker {number}\n\nLocker {number} belongs to the finance team. "
            f"The door code of locker {number} is {7000 + 3 * i}.\n",
            encoding="utf-8",
        )
    kb = open_local(url, embedder=FakeEmbedder())
    try:
        assert len(kb.ingest(sources, tenant=TENANT, roles=("public",)).added) == DOCUMENTS
        operator = create_key(kb, tenant=TENANT, roles=("public",), operator=True, name="op").secret
    finally:
        kb.close()
    with psycopg.connect(url, autocommit=True) as owner:
        owner.execute(f"CREATE ROLE {role} LOGIN IN ROLE veracity_reader")
    yield url, replica.url(name, user=role), operator
    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f"DROP ROLE IF EXISTS {role}")


def _replica_transactions(replica: EmbeddedServer, url: str) -> int:
    """Transactions committed in ``url``'s database on the replica (its own statistics)."""
    import psycopg

    database = url.rsplit("/", 1)[1]
    with psycopg.connect(replica.url(database), autocommit=True) as admin:
        assert admin.execute("SELECT pg_is_in_recovery()").fetchone()[0]
        admin.execute("SELECT pg_stat_clear_snapshot()")
        row = admin.execute("SELECT xact_commit FROM pg_stat_database WHERE datname = %s", (database,))
        return int(row.fetchone()[0])


def _set_replay(replica: EmbeddedServer, paused: bool) -> None:
    import psycopg

    with psycopg.connect(replica.url(), autocommit=True) as admin:
        admin.execute("SELECT pg_wal_replay_pause()" if paused else "SELECT pg_wal_replay_resume()")


def test_withdrawn_on_the_primary_is_never_cited_from_the_replica(
    lockers: tuple[str, str, str], replica: EmbeddedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from veracity.catalog.postgres.replay import replication_lag
    from veracity.service.core.gateway import Gateway

    url, read_url, operator = lockers
    monkeypatch.setenv("VERACITY_READER_URL", read_url)
    gateway = Gateway.open(url, embedder="fake")
    try:
        assert gateway.side.reads_replica  # type: ignore[attr-defined]
        caller = gateway.admit(operator)
        before = _replica_transactions(replica, url)
        for i in range(TRIES):
            source = f"locker-{i:03d}"
            if i % 10 == 0:  # the document is found until its withdraw (every tenth: each search costs)
                assert any(hit["id"] == source for hit in gateway.search(caller, _question(i))["hits"])
            gateway.change(caller, source, "withdraw")  # on the primary; returns once committed
            served = gateway.ask(caller, _question(i))  # at once, read on the replica
            cited = [citation.source_id for citation in served.answer.citations]
            assert source not in cited, f"try {i}: {source} withdrawn on the primary, cited from the replica"
            assert served.cache == "miss" and not served.degraded
        assert _replica_transactions(replica, url) - before >= 2 * TRIES  # the reads ran on the replica
    finally:
        gateway.close()
    lags = replication_lag(url, replica.url(url.rsplit("/", 1)[1]), 50)
    ms = sorted(1000 * lag for lag in lags)
    print(
        f"\nreplica lag over {len(ms)} writes: p50 {statistics.median(ms):.2f} ms, "
        f"p95 {ms[int(0.95 * (len(ms) - 1))]:.2f} ms, max {ms[-1]:.2f} ms"
    )


def test_a_lagging_replica_is_refused_not_read(
    lockers: tuple[str, str, str], replica: EmbeddedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replay paused: the replica itself still shows a withdrawn document, and asks through
    --read-url are denied (the catalog is unavailable) instead of citing it."""
    from veracity.catalog.postgres.store import PostgresStore
    from veracity.catalog.scope import acting_for
    from veracity.kb.local import open_local
    from veracity.service.core.gateway import Gateway

    url, read_url, operator = lockers
    monkeypatch.setenv("VERACITY_READER_URL", read_url)
    gateway = Gateway.open(url, embedder="fake")
    source, question = f"locker-{PAUSED:03d}", _question(PAUSED)
    _set_replay(replica, paused=True)
    try:
        caller = gateway.admit(operator)
        gateway.change(caller, source, "withdraw")  # a write the paused replica does not replay
        monkeypatch.delenv("VERACITY_READER_URL")
        direct = open_local(replica.url(url.rsplit("/", 1)[1]), create=False)  # the replica, no wait
        try:  # what an ask that did not wait would read: the document still there
            assert any(h.source_id == source for h in direct.search(question, tenant=TENANT))
        finally:
            direct.close()
        served = gateway.ask(caller, question)
        assert served.answer.status.value == "abstain" and not served.answer.citations
        assert [d.value for d in served.degraded] == ["catalog_unavailable"]
        store = PostgresStore(url, reader_url=read_url, replica_wait_s=0.3, pool_size=2)
        try:
            with pytest.raises(ReplicaLagError, match="not yet to the primary's"), acting_for(TENANT):
                with store.read():
                    pass
        finally:
            store.close()
    finally:
        _set_replay(replica, paused=False)
        gateway.close()


def test_a_request_waits_for_the_primary_once(
    lockers: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ask and a search each read the primary's position once, whatever their read blocks;
    inside one request a replica connection already past it is not asked again, outside
    one every read asks the primary."""
    import veracity.catalog.postgres.store as store_module
    from veracity.catalog.postgres.replay import replay_fence
    from veracity.catalog.postgres.store import PostgresStore
    from veracity.catalog.scope import acting_for
    from veracity.service.core.gateway import Gateway

    url, read_url, operator = lockers
    positions: list[str] = []
    waits: list[str] = []
    read_position, wait = store_module.primary_position, store_module.wait_for_replay

    def counted_position(connection: object) -> str:
        positions.append(read_position(connection))
        return positions[-1]

    def counted_wait(connection: object, position: str, **options: object) -> float:
        waits.append(position)
        return wait(connection, position, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module, "primary_position", counted_position)
    monkeypatch.setattr(store_module, "wait_for_replay", counted_wait)
    monkeypatch.setenv("VERACITY_READER_URL", read_url)
    gateway = Gateway.open(url, embedder="fake")
    try:
        caller = gateway.admit(operator)
        positions.clear()
        served = gateway.ask(caller, _question(ONCE))
        assert served.cache == "miss" and not served.degraded
        assert [c.source_id for c in served.answer.citations] == [f"locker-{ONCE:03d}"]
        assert len(positions) == 1, f"{len(positions)} reads of the primary's position for one ask"
        assert set(waits) == set(positions)  # every read waited for that position
        positions.clear()
        assert gateway.search(caller, _question(ONCE))["hits"]
        assert len(positions) == 1, f"{len(positions)} reads of the primary's position for one search"
    finally:
        gateway.close()
    store = PostgresStore(url, reader_url=read_url, pool_size=1)  # one connection: always the same
    try:
        positions.clear()
        waits.clear()
        with acting_for(TENANT), replay_fence():
            for _ in range(3):
                with store.read():
                    pass
        assert (len(positions), len(waits)) == (1, 1)  # the connection had reached it
        with acting_for(TENANT):
            for _ in range(3):
                with store.read():
                    pass
        assert (len(positions), len(waits)) == (4, 4)  # no request: each read waits on its own
    finally:
        store.close()


def test_a_replica_that_is_down_is_named_and_denies(
    lockers: tuple[str, str, str],
    replica: EmbeddedServer,
    pg_server: EmbeddedServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The replica stopped under a running service: an ask abstains (nothing said unchecked),
    other routes answer 503 naming the replica, /readyz is 503; the command line says so in one
    line; a store opened now refuses at once. Started again, the same service answers again."""
    import time

    from fastapi.testclient import TestClient

    from veracity.catalog.postgres.server import start_replica, stop_server
    from veracity.catalog.postgres.store import PostgresStore
    from veracity.catalog.scope import acting_for
    from veracity.cli.main import main
    from veracity.service.app import create_app
    from veracity.service.core.gateway import Gateway

    url, read_url, operator = lockers
    where = read_url.split("@", 1)[1]  # host:port/database of the replica
    monkeypatch.setenv("VERACITY_READER_URL", read_url)
    gateway = Gateway.open(url, embedder="fake")
    client = TestClient(create_app(gateway))  # no lifespan: the gateway is closed below
    bearer = {"Authorization": f"Bearer {operator}"}
    question = _question(DOWN)
    try:
        caller = gateway.admit(operator)
        stop_server(replica)
        try:
            served = gateway.ask(caller, question)
            assert served.answer.status.value == "abstain" and not served.answer.citations
            assert [d.value for d in served.degraded] == ["catalog_unavailable"]
            asked = client.post("/v1/ask", json={"question": question}, headers=bearer)
            assert asked.status_code == 200 and asked.json()["status"] == "abstain", asked.text
            assert asked.json()["citations"] == [] and asked.json()["degraded"] == ["catalog_unavailable"]
            for response in (
                client.post("/v1/search", json={"query": question}, headers=bearer),
                client.get("/v1/documents", headers=bearer),
            ):
                assert response.status_code == 503, response.text
                body = response.json()
                assert body["error"] == "ReplicaUnavailableError" and body["status"] == 503
                assert "the read replica" in body["detail"] and "is unreachable" in body["detail"]
                assert where in body["detail"]
            assert client.get("/readyz").status_code == 503
            reader = client.get("/v1/status", headers=bearer).json()["readiness"]["checks"]["reader"]
            assert not reader["ok"] and "ReplicaUnavailableError: the read replica" in reader["detail"]
            start = time.monotonic()
            with pytest.raises(ReplicaUnavailableError, match="is unreachable"), acting_for(TENANT):
                with gateway.side.read():  # type: ignore[attr-defined]
                    pass
            assert time.monotonic() - start < 2  # failed a moment ago: denied at once, not after 5 s
            with pytest.raises(
                ReplicaUnavailableError,
                match=r"the read replica postgresql://\S+ \(--read-url, VERACITY_READER_URL\) is unreachable",
            ):
                PostgresStore(url, reader_url=read_url, pool_size=1)
            result = CliRunner().invoke(
                main,
                ["ask", question, "--kb", url, "--tenant", TENANT, "--read-url", read_url],
                env={"VERACITY_READER_URL": None},
            )
            assert result.exit_code == 1, result.output
            assert "the read replica" in result.output and "is unreachable" in result.output
            assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
        finally:
            start_replica(pg_server.data_dir, replica.data_dir, port=replica.port)
        deadline = time.monotonic() + 60  # the pools reconnect in the background, backing off
        while True:
            served = gateway.ask(caller, question)
            if not served.degraded or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert not served.degraded
        assert [c.source_id for c in served.answer.citations] == [f"locker-{DOWN:03d}"]
        assert client.get("/readyz").status_code == 200
    finally:
        gateway.close()


def test_replica_command_and_read_url(
    lockers: tuple[str, str, str], replica: EmbeddedServer, pg_server: EmbeddedServer, tmp_path: Path
) -> None:
    from veracity.cli.main import main

    url, read_url, _ = lockers
    runner = CliRunner()
    again = runner.invoke(main, ["pg", "replica", str(pg_server.data_dir), str(replica.data_dir)])
    assert again.exit_code == 0, again.output
    assert again.output.strip() == replica.url("veracity")  # already running: the same server
    before = _replica_transactions(replica, url)
    asked = runner.invoke(
        main,
        ["ask", _question(ASKED), "--kb", url, "--tenant", TENANT, "--read-url", read_url, "--json"],
        env={"VERACITY_READER_URL": None},  # restored afterwards: --read-url sets it
    )
    assert asked.exit_code == 0, asked.output
    assert _replica_transactions(replica, url) > before
    wrong = runner.invoke(main, ["ask", "x", "--kb", str(tmp_path), "--read-url", read_url])
    assert wrong.exit_code == 2 and "postgresql:// URL" in wrong.output


def test_replica_refuses_what_it_cannot_do(pg_server: EmbeddedServer, tmp_path: Path) -> None:
    from veracity.catalog.postgres.server import start_replica

    stopped = tmp_path / "stopped"
    stopped.mkdir()
    with pytest.raises(ConfigError, match="no embedded PostgreSQL server is running"):
        start_replica(stopped, tmp_path / "copy")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ConfigError, match="is not empty"):
        start_replica(pg_server.data_dir, busy)
    with pytest.raises(ConfigError, match="folder of its own"):
        start_replica(pg_server.data_dir, pg_server.data_dir / "inside")
    assert (busy / "notes.txt").read_text(encoding="utf-8") == "mine"
