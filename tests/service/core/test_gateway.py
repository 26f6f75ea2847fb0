"""The gateway: answers scoped by key, cached per scope and state, and kept honest across processes."""

from __future__ import annotations

import threading
import time

import pytest

from veracity.model.errors import ForbiddenError, RateLimitError, ValidationError
from veracity.service.core.gateway import Gateway, GatewaySettings
from veracity.service.core.rate_limits import RateLimit

SHORT = "3.2 的 Team 能用 SAML 吗"


@pytest.fixture
def two(served_kb):
    """Two gateways on one directory, as two worker processes would have."""
    first, second = Gateway.open(served_kb[0]), Gateway.open(served_kb[0])
    yield first, second, served_kb[1]
    first.close()
    second.close()


def test_cache_is_per_scope_and_hits_are_fast(two) -> None:
    gate, _, keys = two
    public, maintainer = gate.admit(keys.public), gate.admit(keys.maintainer)
    first = gate.ask(public, SHORT)
    again = gate.ask(public, SHORT)
    assert (first.cache, again.cache) == ("miss", "hit") and again.answer == first.answer
    assert gate.ask(maintainer, SHORT).cache == "miss"  # other roles: never the same entry
    assert gate.ask(public, SHORT, version="3.2").cache == "miss"
    assert gate.ask(public, SHORT, as_of="2026-08-27").cache == "miss"
    stats = gate.cache.stats()
    assert stats.hits == 1 and stats.mean_hit_ms < stats.mean_miss_ms


def test_a_withdraw_in_another_process_ends_every_cached_answer(two) -> None:
    reader, writer, keys = two
    public = reader.admit(keys.public)
    assert [c.source_id for c in reader.ask(public, SHORT).answer.citations] == ["faq-3.2-sso"]
    assert reader.ask(public, SHORT).cache == "hit"
    writer.change(writer.admit(keys.operator), "faq-3.2-sso", "withdraw")
    after = reader.ask(public, SHORT)
    assert after.cache == "miss"
    assert "faq-3.2-sso" not in [c.source_id for c in after.answer.citations]


def test_operator_actions_need_an_operator_key(two) -> None:
    gate, _, keys = two
    for action in (
        lambda c: gate.change(c, "faq-3.2-sso", "withdraw"),
        lambda c: gate.status(c),
        lambda c: gate.reindex(c),
        lambda c: gate.upload(c, [("a.md", b"# A\\n\\ntext")]),
    ):
        with pytest.raises(ForbiddenError, match="operator key"):
            action(gate.admit(keys.maintainer))


def test_bad_input_is_a_validation_error(two) -> None:
    gate, _, keys = two
    caller = gate.admit(keys.public)
    with pytest.raises(ValidationError, match="question is empty"):
        gate.ask(caller, "  ")
    with pytest.raises(ValidationError, match="as_of"):
        gate.ask(caller, SHORT, as_of="yesterday-ish")
    with pytest.raises(ValidationError, match="version is empty"):
        gate.ask(caller, SHORT, version=" ")


def test_each_key_has_its_own_rate(served_kb) -> None:
    gate = Gateway.open(served_kb[0], settings=GatewaySettings(rate_limit=RateLimit(per_minute=1, burst=2)))
    keys = served_kb[1]
    gate.admit(keys.public)
    gate.admit(keys.public)
    with pytest.raises(RateLimitError):
        gate.admit(keys.public)
    gate.admit(keys.maintainer)
    gate.close()


def test_reindex_publishes_a_verified_version(two) -> None:
    gate, _, keys = two
    report = gate.reindex(gate.admit(keys.operator))
    assert report["published"] and report["verification_passed"] and report["version"] == 2
    assert gate.readiness()["checks"]["index"] == {"ok": True, "version": 2, "detail": "verified by reindex"}


def test_concurrent_misses_for_one_key_compute_once(two, monkeypatch) -> None:
    import veracity.service.core.gateway as gateway_module

    gate, _, keys = two
    calls = []
    real = gateway_module.answer_or_degrade

    def counted(*args, **kwargs):
        calls.append(args[4])
        time.sleep(0.2)  # the others arrive while it computes
        return real(*args, **kwargs)

    monkeypatch.setattr(gateway_module, "answer_or_degrade", counted)
    caller = gate.admit(keys.public)
    served = []
    threads = [threading.Thread(target=lambda: served.append(gate.ask(caller, SHORT))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and sorted(s.cache for s in served) == ["hit", "hit", "hit", "miss"]
    assert len({s.answer for s in served}) == 1


def test_served_from_postgresql_through_the_reader_role(
    served_kb, pg_url, pg_reader, monkeypatch, tmp_path
) -> None:
    """The same answers as the directory's, read as a role row-level security confines to the key's tenant."""
    import psycopg

    from veracity.index.embedders import FakeEmbedder
    from veracity.testing.tenants import build_served_kb

    pg_keys = build_served_kb(pg_url, FakeEmbedder(), sources=tmp_path / "acme")
    reader_url = pg_reader(pg_url)
    monkeypatch.setenv("VERACITY_READER_URL", reader_url)
    database, directory = Gateway.open(pg_url), Gateway.open(served_kb[0])
    try:
        asked = [
            ("public", SHORT), ("acme_public", "退货政策是什么"), ("acme_staff", "payroll codeword"),
            ("public", "payroll codeword ZEBRA-42"), ("acme_public", SHORT),
        ]  # fmt: skip
        for name, question in asked:
            mine = database.ask(database.admit(getattr(pg_keys, name)), question).answer
            theirs = directory.ask(directory.admit(getattr(served_kb[1], name)), question).answer
            assert [c.chunk_id for c in mine.citations] == [c.chunk_id for c in theirs.citations], question
            assert mine.status == theirs.status, question
            tenant = "starship" if name == "public" else "acme"
            assert all(c.source_id.startswith("acme-") == (tenant == "acme") for c in mine.citations)
        role = reader_url.split("//", 1)[1].split("@", 1)[0]
        with psycopg.connect(pg_url) as owner:
            sessions = owner.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = %s", (role,)
            ).fetchone()[0]
        assert sessions >= 1  # the answers were read as the reader role
    finally:
        database.close()
        directory.close()


def test_different_questions_are_answered_at_the_same_time(two, monkeypatch) -> None:
    """Two misses for different keys overlap (a barrier both must reach); a hit never waits for them."""
    import veracity.service.core.gateway as gateway_module

    gate, _, keys = two
    caller = gate.admit(keys.public)
    gate.ask(caller, "成员数超过新计划上限会怎样？")  # cached before the slow ones start
    both = threading.Barrier(2, timeout=10)
    real = gateway_module.answer_or_degrade
    hit_seconds = []

    def meeting(*args, **kwargs):
        both.wait()  # a lock around answering would break the barrier: the second never arrives
        started = time.perf_counter()
        hit = gate.ask(caller, "成员数超过新计划上限会怎样？")
        hit_seconds.append((hit.cache, time.perf_counter() - started))
        return real(*args, **kwargs)

    monkeypatch.setattr(gateway_module, "answer_or_degrade", meeting)
    served = []
    threads = [
        threading.Thread(target=lambda q=q: served.append(gate.ask(caller, q)))
        for q in (SHORT, "2026 年 8 月的 SSO 故障是怎么回事？")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(s.cache for s in served) == ["miss", "miss"] and not both.broken
    assert [cache for cache, _ in hit_seconds] == ["hit", "hit"]
    assert gate.sessions.opened == 2


def test_workers_share_one_cache_and_one_rate_limit(served_kb) -> None:
    """What one worker answered is a hit on the other; a key's burst is spent across both."""
    settings = GatewaySettings(rate_limit=RateLimit(per_minute=1, burst=3))
    first, second = (Gateway.open(served_kb[0], settings=settings) for _ in range(2))
    try:
        keys = served_kb[1]
        asked = first.ask(first.admit(keys.public), SHORT)
        again = second.ask(second.admit(keys.public), SHORT)
        assert (asked.cache, again.cache) == ("miss", "hit") and again.answer == asked.answer
        first.admit(keys.public)  # the third request of the burst, on either worker
        with pytest.raises(RateLimitError):
            second.admit(keys.public)
        with pytest.raises(RateLimitError):
            first.admit(keys.public)
        second.admit(keys.maintainer)  # another key: its own bucket
        second.change(second.admit(keys.operator), "faq-3.2-sso", "withdraw")
        for gate in (first, second):
            after = gate.ask(gate.admit(keys.maintainer), SHORT)
            assert "faq-3.2-sso" not in [c.source_id for c in after.answer.citations]
    finally:
        first.close()
        second.close()


def test_workers_on_one_postgresql_database_share_one_cache_and_one_rate_limit(
    pg_url, pg_reader, monkeypatch, tmp_path
) -> None:
    """As on a directory, with the tables in the database and answers read through the reader role:
    a hit on the other worker, a burst spent across both, a withdraw on one ends both's cached answers."""
    from veracity.catalog.postgres.connection import ENGINE_CONNECTIONS, side_connections
    from veracity.index.embedders import FakeEmbedder
    from veracity.testing.tenants import build_served_kb

    keys = build_served_kb(pg_url, FakeEmbedder(), sources=tmp_path / "acme")
    monkeypatch.setenv("VERACITY_READER_URL", pg_reader(pg_url))
    settings = GatewaySettings(rate_limit=RateLimit(per_minute=1, burst=3), answer_sessions=3)
    first, second = (Gateway.open(pg_url, settings=settings) for _ in range(2))
    try:
        asked = first.ask(first.admit(keys.public), SHORT)
        again = second.ask(second.admit(keys.public), SHORT)
        assert (asked.cache, again.cache) == ("miss", "hit") and again.answer == asked.answer
        assert "faq-3.2-sso" in [c.source_id for c in again.answer.citations]
        acme = second.ask(second.admit(keys.acme_public), SHORT)  # same question, another tenant
        assert acme.cache == "miss" and not any(c.source_id.startswith("faq-") for c in acme.answer.citations)
        first.admit(keys.public)  # the third request of the burst, on either worker
        for gate in (second, first):
            with pytest.raises(RateLimitError):
                gate.admit(keys.public)
        callers = [(gate, gate.admit(keys.maintainer)) for gate in (first, second)]
        held = [gate.ask(caller, SHORT) for gate, caller in callers]
        assert [h.cache for h in held] == ["miss", "hit"]
        assert all("faq-3.2-sso" in [c.source_id for c in h.answer.citations] for h in held)
        second.change(second.admit(keys.operator), "faq-3.2-sso", "withdraw")
        # both held the answer citing it, in memory and in the table: the first asks again, the
        # second finds what the first computed after the withdraw
        after = [gate.ask(caller, SHORT) for gate, caller in callers]
        assert [a.cache for a in after] == ["miss", "hit"]
        assert not any("faq-3.2-sso" in [c.source_id for c in a.answer.citations] for a in after)
        # the pools follow the answering threads: an engine's store two, the light reads' threads + 2
        assert first.side._pool.max_size == first.side._reader_pool.max_size == side_connections(3) == 5
        stores = [first.store, *(s.kb.engine.catalog.store for s in first.sessions._opened)]
        assert len(stores) == 2 and all(s._pool.max_size == ENGINE_CONNECTIONS for s in stores)
    finally:
        first.close()
        second.close()


def test_without_sharing_each_worker_keeps_its_own(served_kb) -> None:
    settings = GatewaySettings(shared=False)
    first, second = (Gateway.open(served_kb[0], settings=settings) for _ in range(2))
    try:
        keys = served_kb[1]
        assert first.ask(first.admit(keys.public), SHORT).cache == "miss"
        assert second.ask(second.admit(keys.public), SHORT).cache == "miss"
        assert not (served_kb[0] / "serving.sqlite").exists()
    finally:
        first.close()
        second.close()


def test_a_folder_where_the_shared_file_cannot_be_written_serves_with_its_own_cache(served_kb) -> None:
    (served_kb[0] / "serving.sqlite").mkdir()  # not a database file: it cannot be opened
    gate = Gateway.open(served_kb[0])
    try:
        caller = gate.admit(served_kb[1].public)
        assert [gate.ask(caller, SHORT).cache for _ in range(2)] == ["miss", "hit"]
        assert gate.cache.second is None
    finally:
        gate.close()
