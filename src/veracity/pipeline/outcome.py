"""What the pipeline returns: the answer, with its claims, citations and trace."""

from __future__ import annotations

from dataclasses import dataclass

from ..model.contracts import AnswerStatus, Citation, Claim
from .trace import Trace


@dataclass(frozen=True, slots=True)
class Answer:
    """What veracity says: status, claims with citation ids, what is missing, and the trace."""

    question: str
    status: AnswerStatus
    claims: tuple[Claim, ...]
    citations: tuple[Citation, ...]
    missing_fact_ids: tuple[str, ...]
    uncovered_subquestions: tuple[str, ...]
    reasons: tuple[str, ...]
    trace: Trace
