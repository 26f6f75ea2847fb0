"""A fake guard for tests: it "classifies" by looking for marker phrases the test gives it.

It keeps the :class:`veracity.guard.model.GuardModel` surface (``scores``, ``threshold``,
``version``), so the evidence gate and the ``guard`` command can be tested without trained
weights: a text holding one of the markers scores ``0.9``, anything else ``0.1``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class FakeGuard:
    """Scores 0.9 when a text holds a marker (case-folded), else 0.1; threshold 0.5."""

    version = "fake-guard"
    threshold = 0.5

    def __init__(self, markers: Iterable[str]) -> None:
        self.markers = tuple(marker.casefold() for marker in markers)
        self.calls = 0

    def scores(self, texts: Sequence[str]) -> list[float]:
        self.calls += 1
        return [0.9 if any(m in text.casefold() for m in self.markers) else 0.1 for text in texts]
