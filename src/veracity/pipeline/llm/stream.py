"""Claims as they pass verification, for a caller that streams the answer while it is written.

Two context variables, set for the duration of one ask (a thread of its own keeps them apart):

- :data:`CLAIM_LISTENER`, set by whoever streams (the service): it is called with each written
  claim *after* it passed verification, numbered as the final answer numbers it, with the
  citations it brings in first; and with ``None`` when what was streamed must be forgotten
  (the model's stream started over after a retry);
- :data:`TEXT_LISTENER`, set by the LLM composer around its model call: the chat client calls
  it with the text written so far on every piece of a streamed completion.

Nothing is streamed before it is verified: a claim still being written (the last one of the
text so far) waits for the next one to begin or for the model to finish. Whether the final
answer is the streamed one (a written answer can still turn partial, or fall back to the
extractive claims) is the streaming caller's to check against the answer it then gets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from ...model.contracts import Citation, Claim

__all__ = ["CLAIM_LISTENER", "TEXT_LISTENER", "StreamedClaim", "heard"]


@dataclass(frozen=True, slots=True)
class StreamedClaim:
    """A verified claim with its final citation numbers, and the citations first cited by it."""

    claim: Claim
    new_citations: tuple[Citation, ...]


ClaimListener = Callable[[StreamedClaim | None], None]
CLAIM_LISTENER: ContextVar[ClaimListener | None] = ContextVar("veracity_claim_listener", default=None)
TEXT_LISTENER: ContextVar[Callable[[str], None] | None] = ContextVar("veracity_text_listener", default=None)


def heard(text_so_far: str) -> None:
    """Tell the composer what the model has written so far (the chat client calls this)."""
    listener = TEXT_LISTENER.get()
    if listener is not None:
        listener(text_so_far)


def first_use_numbers(numbers: dict[int, int], positions: Sequence[int]) -> list[int]:
    """The final numbers of ``positions`` (numbered 1, 2, … in order of first use), new ones added."""
    fresh = []
    for position in positions:
        if position not in numbers:
            numbers[position] = len(numbers) + 1
            fresh.append(position)
    return fresh
