"""One served test knowledge base (the demo plus tenant acme with a staff-only page) for the adapters."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path

import pytest

from veracity.index.embedders import FakeEmbedder
from veracity.kb.local import LocalKnowledgeBase, open_local
from veracity.testing.tenants import ServedKeys, build_served_kb

HIDDEN = ("acme-payroll", "ZEBRA-42", "payroll")
"""What a public acme principal must never receive through any adapter (a staff-only page)."""


@cache
def served() -> tuple[Path, ServedKeys]:
    """Built once per test process (read-only for the tests)."""
    parent = Path(tempfile.mkdtemp(prefix="veracity-adapters-"))
    atexit.register(shutil.rmtree, parent, ignore_errors=True)  # a cached value outlives fixtures
    folder = parent / "kb"
    return folder, build_served_kb(folder, FakeEmbedder())


@cache
def opened() -> LocalKnowledgeBase:
    """The served knowledge base, opened (fake embedder)."""
    return open_local(served()[0], embedder=FakeEmbedder(), create=False)


@pytest.fixture
def kb() -> LocalKnowledgeBase:
    return opened()


def leaks(text: str) -> list[str]:
    """The hidden markers ``text`` contains."""
    return [marker for marker in HIDDEN if marker.lower() in text.lower()]
