"""Reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009). Pure.

Each channel (``"lexical"``, ``"semantic"``, ...) contributes ``w / (k + rank)``
for every id it ranks, with ``rank`` 1-based; an id's fused score is the sum over
the channels that ranked it. The result is sorted by score descending, ties by
id ascending. Per-id sums are exact-rounded (:func:`math.fsum`), so the result
does not depend on the order of the channels in the mapping, not even in the
last bit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ..model.errors import ConfigError, ValidationError

DEFAULT_K = 60
"""The ``k`` of the original paper, also ranx's default."""


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[str]],
    *,
    k: float = DEFAULT_K,
    weights: Mapping[str, float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse per-channel rankings into one ``[(id, score)]`` list, best first, ties by id.

    ``rankings`` maps a channel name to its ids, best first. ``weights`` maps a
    channel name to a finite weight >= 0 (default 1.0 for every channel); a
    weight for a channel that is not in ``rankings`` is an error, as is a
    channel that ranks the same id twice. ``k`` must be > 0.
    """
    if isinstance(k, bool) or not isinstance(k, int | float) or not math.isfinite(k) or k <= 0:
        raise ConfigError(f"RRF k must be a finite number > 0, got {k!r}")
    weights = dict(weights or {})
    unknown = sorted(set(weights) - set(rankings))
    if unknown:
        raise ConfigError(f"RRF weights name unknown channels {unknown}; channels: {sorted(rankings)}")
    for channel, weight in weights.items():
        if not math.isfinite(weight) or weight < 0:
            raise ConfigError(f"RRF weight of channel {channel!r} must be >= 0, got {weight!r}")
    parts: dict[str, list[float]] = {}
    for channel in sorted(rankings):
        ranking = rankings[channel]
        if isinstance(ranking, str):
            raise ValidationError(
                f"channel {channel!r} ranking must be a sequence of ids, not one string",
                field="rankings",
            )
        weight = weights.get(channel, 1.0)
        seen: set[str] = set()
        for rank, doc_id in enumerate(ranking, start=1):
            if doc_id in seen:
                raise ValidationError(
                    f"channel {channel!r} ranks id {doc_id!r} twice; deduplicate it first",
                    field="rankings",
                )
            seen.add(doc_id)
            parts.setdefault(doc_id, []).append(weight / (k + rank))
    fused = [(doc_id, math.fsum(values)) for doc_id, values in parts.items()]
    fused.sort(key=lambda item: (-item[1], item[0]))
    return fused
