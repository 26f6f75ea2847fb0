"""Per-key token buckets, with a clock the test moves."""

from __future__ import annotations

import pytest

from veracity.model.errors import ConfigError, RateLimitError
from veracity.service.core.rate_limits import RateLimit, RateLimiter


def test_bursts_then_the_rate_then_each_key_apart() -> None:
    now = [0.0]
    limiter = RateLimiter(RateLimit(per_minute=60, burst=3), clock=lambda: now[0])
    for _ in range(3):
        limiter.take("a")
    with pytest.raises(RateLimitError) as refused:
        limiter.take("a")
    assert 0.9 < refused.value.retry_after <= 1.0
    limiter.take("b")  # another key has its own bucket
    now[0] = 1.0
    limiter.take("a")
    with pytest.raises(RateLimitError):
        limiter.take("a")


def test_zero_means_no_limit_and_bad_limits_are_refused() -> None:
    limiter = RateLimiter(RateLimit(per_minute=0, burst=1))
    for _ in range(100):
        limiter.take("a")
    with pytest.raises(ConfigError):
        RateLimit(per_minute=-1)
