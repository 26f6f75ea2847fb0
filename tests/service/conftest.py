"""A test client over the served knowledge base (the demo, tenant acme, keys; fake embedder)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from veracity.service.app import create_app
from veracity.service.core.gateway import Gateway, GatewaySettings
from veracity.service.core.rate_limits import RateLimit


def auth(key: str) -> dict[str, str]:
    """The header a client sends."""
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def client(served_kb):
    """``(client, keys)`` over a private copy; generous rate limit."""
    folder, keys = served_kb
    gateway = Gateway.open(folder, settings=GatewaySettings(rate_limit=RateLimit(per_minute=0)))
    with TestClient(create_app(gateway, max_body=4096, max_upload=64 * 1024)) as test_client:
        yield test_client, keys
