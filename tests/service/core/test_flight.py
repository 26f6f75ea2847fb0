"""Single flight and the session pool: one computation per key, other keys and sessions never wait."""

from __future__ import annotations

import threading
import time

import pytest

from veracity.service.core.flight import SingleFlight
from veracity.service.core.sessions import SessionPool


def _together(*targets) -> None:
    threads = [threading.Thread(target=t) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert not any(t.is_alive() for t in threads)


def test_one_key_computes_once_and_every_caller_gets_it() -> None:
    flight: SingleFlight[int] = SingleFlight()
    calls, results = [], []
    started = threading.Semaphore(0)

    def slow() -> int:
        calls.append(1)
        for _ in range(5):  # every caller has reached run() (a late one would lead a second flight)
            assert started.acquire(timeout=10)
        time.sleep(0.2)  # and is waiting in it
        return 42

    def call() -> None:
        started.release()
        results.append(flight.run("k", slow))

    _together(*[call for _ in range(5)])
    assert len(calls) == 1
    assert sorted(results) == [(42, False)] + [(42, True)] * 4
    assert flight.in_flight() == 0


def test_different_keys_run_at_the_same_time() -> None:
    flight: SingleFlight[str] = SingleFlight()
    both = threading.Barrier(2, timeout=5)  # broken (an error) unless both computations overlap
    results = []

    def compute(name: str) -> str:
        both.wait()
        return name

    _together(
        lambda: results.append(flight.run("a", lambda: compute("a"))),
        lambda: results.append(flight.run("b", lambda: compute("b"))),
    )
    assert sorted(results) == [("a", False), ("b", False)]


def test_a_failure_reaches_every_waiter_and_the_key_is_free_again() -> None:
    flight: SingleFlight[int] = SingleFlight()
    errors = []

    def failing() -> int:
        time.sleep(0.1)
        raise OSError("disk gone")

    def call() -> None:
        try:
            flight.run("k", failing)
        except OSError as exc:
            errors.append(str(exc))

    _together(call, call, call)
    assert errors == ["disk gone"] * 3
    assert flight.run("k", lambda: 7) == (7, False)


class _Session:
    def __init__(self, number: int) -> None:
        self.number = number
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_the_pool_opens_lazily_up_to_its_size_and_serves_waiters_in_order() -> None:
    opened: list[_Session] = []

    def open_one() -> _Session:
        opened.append(_Session(len(opened)))
        return opened[-1]

    pool = SessionPool(open_one, 2)  # type: ignore[arg-type]
    assert pool.opened == 0
    with pool.session() as first, pool.session() as second:
        assert {first.number, second.number} == {0, 1}
    assert pool.opened == 2
    order: list[int] = []

    def wait(mark: int) -> None:
        with pool.session():
            order.append(mark)
            time.sleep(0.3)  # long enough for the other holder to note its turn first

    with pool.session(), pool.session():
        waiters = []
        for mark in range(4):  # each arrives after the previous one is queued
            waiters.append(threading.Thread(target=wait, args=(mark,)))
            waiters[-1].start()
            time.sleep(0.1)
    for waiter in waiters:
        waiter.join(timeout=5)
    assert sorted(order[:2]) == [0, 1] and sorted(order[2:]) == [2, 3]  # first come, first served
    assert pool.opened == 2
    pool.close()
    assert all(s.closed for s in opened)
    with pytest.raises(RuntimeError, match="closed"):
        with pool.session():
            pass
    with pytest.raises(ValueError):
        SessionPool(open_one, 0)  # type: ignore[arg-type]


def test_fill_opens_every_session_once() -> None:
    opened: list[_Session] = []
    pool = SessionPool(lambda: opened.append(_Session(len(opened))) or opened[-1], 3)  # type: ignore[arg-type,func-returns-value]
    pool.fill()
    pool.fill()
    assert pool.opened == 3 and len(opened) == 3
    with pool.session(), pool.session(), pool.session():
        assert len(opened) == 3

