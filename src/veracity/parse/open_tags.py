"""The open elements of an HTML page, kept so that parsing stays linear however deep it nests."""

from __future__ import annotations

from collections import Counter

__all__ = ["TagStack"]


class TagStack:
    """Open tags with a count per name: push, membership and close-to-tag in amortized O(1).

    Past ``max_depth`` tags are not kept; ``overflow`` counts them, and the
    next end tags close those first (whatever their names).
    """

    def __init__(self, max_depth: int) -> None:
        self.tags: list[str] = []
        self.counts: Counter[str] = Counter()
        self.max_depth = max_depth
        self.overflow = 0

    def __bool__(self) -> bool:
        return bool(self.tags) or self.overflow > 0

    def __contains__(self, tag: object) -> bool:
        return self.counts[tag] > 0 if isinstance(tag, str) else False

    def push(self, tag: str) -> bool:
        """Open ``tag``; ``False`` when it is past ``max_depth`` (counted, not kept)."""
        if len(self.tags) >= self.max_depth:
            self.overflow += 1
            return False
        self.tags.append(tag)
        self.counts[tag] += 1
        return True

    def close(self, tag: str) -> bool:
        """Close ``tag`` and every tag opened after it; ``False`` when it is not open (nothing changes)."""
        if self.overflow:
            self.overflow -= 1
            return False
        if not self.counts[tag]:
            return False
        while True:
            top = self.tags.pop()
            self.counts[top] -= 1
            if top == tag:
                return True
