"""A fake reader for tests: it "reads" by finding a known answer text in a passage.

It keeps the :class:`veracity.reader.model.Reader` surface the pipeline uses (``read``,
``threshold_for``, ``version``), so the answer step can be tested without trained weights: a
question the fake knows gets a span where its answer text occurs (score ``+5``), anything else
none (score ``-5``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
