"""Fakes of the trained models for tests: a reader and a guard that need no weights.

- :class:`FakeReader` keeps the :class:`veracity.reader.model.Reader` surface the pipeline uses
  (``read``, ``threshold_for``, ``version``): a question it knows gets a span where its answer
  text occurs (score ``+5``), anything else none (score ``-5``).
- :class:`FakeChooser` keeps the :class:`veracity.reader.choice.ChoiceModel` surface (``scores``,
  ``name``, ``version``): a sentence holding the answer text it knows for the question gets
  ``+4``, any other ``-4``.
- :class:`FakeGuard` keeps the :class:`veracity.guard.model.GuardModel` surface (``scores``,
  ``threshold``, ``version``): a text holding one of its markers scores ``0.9``, anything else
  ``0.1``; :func:`fake_guard_in_use` makes one decide for the length of a block.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from ..reader.model import Reading


class FakeReader:
    """Finds ``answers[question]`` in each passage body; threshold 0 for every language."""

    version = "fake"
    decides = True

    def __init__(self, answers: Mapping[str, str]) -> None:
        self.answers = dict(answers)
        self.thresholds: dict[str, float] = {"all": 0.0}
        self.calls: list[tuple[str, int]] = []

    def threshold_for(self, language: str) -> float:
        return self.thresholds.get(language, self.thresholds.get("all", 0.0))

    def read(
        self, question: str, passages: Sequence[tuple[str, str]], *, batch_size: int = 8
    ) -> list[Reading]:
        self.calls.append((question, len(passages)))
        wanted = self.answers.get(question)
        out = []
        for _, body in passages:
            at = body.find(wanted) if wanted else -1
            if at >= 0:
                out.append(Reading(at, at + len(wanted or ""), 5.0, 0.0))
            else:
                out.append(Reading(0, min(len(body), 1), -5.0, 0.0))
        return out


class FakeChooser:
    """Scores ``+4`` for a sentence holding ``answers[question]``, else ``-4``."""

    name = "fake-chooser"
    version = "fake-chooser"

    def __init__(self, answers: Mapping[str, str]) -> None:
        self.answers = dict(answers)
        self.calls: list[tuple[str, int]] = []

    def scores(self, question: str, candidates: Sequence[tuple[str, ...]]) -> list[float]:
        self.calls.append((question, len(candidates)))
        wanted = self.answers.get(question)
        return [4.0 if wanted and wanted in candidate[1] else -4.0 for candidate in candidates]


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


@contextmanager
def fake_guard_in_use(markers: Iterable[str]) -> Iterator[FakeGuard]:
    """A :class:`FakeGuard` of ``markers`` deciding injection verdicts inside the block (the
    cue-word detector again after it)."""
    from ..pipeline.injection import use_guard

    guard = FakeGuard(markers)
    use_guard(guard)
    try:
        yield guard
    finally:
        use_guard(None)
