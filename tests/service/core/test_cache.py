"""The answer cache: scoped keys, state changes drop entries, stale requests neither find nor store."""

from __future__ import annotations

from datetime import UTC, datetime

from veracity.model.contracts import AnswerStatus
from veracity.pipeline.outcome import Answer
from veracity.pipeline.trace import Trace
from veracity.service.core.cache import AnswerCache, CacheKey, CatalogState, as_of_bucket

MOMENT = datetime(2026, 8, 27, 16, 0, tzinfo=UTC)


def _answer(text: str) -> Answer:
    trace = Trace(query_digest=text, tenant="t", roles=("public",), target_version=None, as_of="")
    return Answer(text, AnswerStatus.ABSTAIN, (), (), (), (), (), trace)


def _key(state: CatalogState, *, roles=("public",), tenant="t", question="q", version=None) -> CacheKey:
    return CacheKey.of(
        tenant=tenant, roles=roles, version=version, as_of=MOMENT, question=question, state=state
    )


def test_keys_hold_the_whole_scope() -> None:
    state = CatalogState(1, 1, 1)
    base = _key(state)
    assert base == _key(state, roles=["public", "public"])  # sorted and deduplicated
    assert base != _key(state, roles=("public", "support"))
    assert base != _key(state, tenant="other")
    assert base != _key(state, question="q2")
    assert base != _key(state, version="3.2")
    assert base != _key(CatalogState(1, 1, 2)) and base != _key(CatalogState(2, 1, 1))
    assert base == CacheKey.of(
        tenant="t", roles=("public",), version=None, as_of=MOMENT, question="  q ", state=state
    )


def test_the_digest_holds_the_whole_principal_unambiguously() -> None:
    """The shared tables find an answer by digest alone: every part of the scope is in it,
    and no two scopes meet by how their parts split (a role may hold a comma)."""
    state = CatalogState(1, 1, 1)
    base = _key(state).digest()
    assert base == _key(state, roles=["public", "public"]).digest()
    others = {
        _key(state, tenant="other").digest(),
        _key(state, roles=("public", "support")).digest(),
        _key(state, roles=("a,b",)).digest(),
        _key(state, roles=("a", "b")).digest(),
        _key(state, tenant="t", roles=("x",)).digest(),
        _key(state, tenant="t,x", roles=()).digest(),
        _key(CatalogState(1, 1, 2)).digest(),
        _key(state, version="3.2").digest(),
    }
    assert len(others) == 8 and base not in others


def test_hits_misses_and_a_new_state_drops_everything() -> None:
    cache = AnswerCache(8)
    first = CatalogState(1, 1, 1)
    assert cache.get(_key(first)) is None
    cache.put(_key(first), _answer("a"))
    assert cache.get(_key(first)).question == "a"
    assert cache.get(_key(first, roles=("maintainer",))) is None  # never shared across roles
    after = CatalogState(1, 1, 2)  # a withdraw moved the catalog revision
    assert cache.get(_key(after)) is None and cache.stats().entries == 0
    for hit in (False, True, False, False):
        cache.record(hit=hit, seconds=0.01)
    stats = cache.stats()
    assert (stats.hits, stats.misses) == (1, 3) and stats.hit_rate == 0.25


def test_a_request_that_read_an_older_state_neither_finds_nor_stores() -> None:
    cache = AnswerCache(8)
    old, new = CatalogState(1, 1, 1), CatalogState(1, 2, 2)
    cache.put(_key(old), _answer("old"))
    assert cache.get(_key(new)) is None  # the cache follows the newer state
    cache.put(_key(old), _answer("late"))  # computed before the change, finished after it
    assert cache.get(_key(old)) is None and cache.stats().entries == 0


def test_lru_bound_and_latencies() -> None:
    cache = AnswerCache(2)
    state = CatalogState(1, 1, 1)
    for question in ("a", "b", "c"):
        cache.put(_key(state, question=question), _answer(question))
    assert cache.get(_key(state, question="a")) is None and cache.stats().entries == 2
    cache.record(hit=True, seconds=0.001)
    cache.record(hit=False, seconds=0.1)
    assert cache.stats().as_dict()["mean_miss_ms"] == 100.0
    assert AnswerCache(0).put(_key(state), _answer("x")) is None


def test_as_of_buckets_are_minutes() -> None:
    assert as_of_bucket(datetime(2026, 8, 27, 16, 0, 59, 999, tzinfo=UTC)) == datetime(
        2026, 8, 27, 16, 0, tzinfo=UTC
    )
