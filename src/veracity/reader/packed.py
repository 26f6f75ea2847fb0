"""The encoder's first-token states of several sequences, packed end to end without padding.

A one-logit model (the sentence reader, the guard) reads only the last layer's ``<s>`` state.
:meth:`Encoder.forward <veracity.reader.encoder.Encoder.forward>` pads a batch to its longest
sequence and computes every position of every layer. Here the sequences' tokens are stacked
into one ``[tokens, H]`` matrix: the position-wise steps (projections, the feed-forward block,
LayerNorms) run over real tokens only, attention runs per sequence over its own rows, and the
last layer, whose other positions nobody reads, computes its attention output and feed-forward
block for the first token of each sequence alone (its keys and values still come from every
token). Each row's arithmetic is that of :meth:`forward`; only BLAS's blocking may differ in the
last float bits.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from veracity.model.errors import ConfigError

from .encoder import finish_layer, softmax

if TYPE_CHECKING:
    from .encoder import Encoder, _Layer

__all__ = ["first_token_states"]

FloatArray = npt.NDArray[np.float32]


def first_token_states(encoder: Encoder, sequences: Sequence[Sequence[int]]) -> FloatArray:
    """The last layer's state of each sequence's first token, ``[len(sequences), H]``."""
    sizes = [len(s) for s in sequences]
    if not sizes:
        return np.zeros((0, encoder.hidden), np.float32)
    if min(sizes) < 1:
        raise ConfigError("every sequence needs at least one token")
    if max(sizes) > (limit := encoder.positions.shape[0]):
        raise ConfigError(f"sequences of {max(sizes)} tokens exceed the {limit} positions")
    ids = np.fromiter(chain.from_iterable(sequences), dtype=np.int64, count=sum(sizes))
    positions = np.concatenate([np.arange(size) for size in sizes])
    x = encoder.embed_tokens(ids[None], position_ids=positions[None])[0]  # one row of all tokens
    starts = np.cumsum([0, *sizes[:-1]])
    if not encoder.layers:
        return x[starts]
    for layer in encoder.layers[:-1]:
        x = _layer(encoder, layer, x, starts, sizes, first_only=False)
    return _layer(encoder, encoder.layers[-1], x, starts, sizes, first_only=True)


def _layer(
    encoder: Encoder,
    layer: _Layer,
    x: FloatArray,
    starts: npt.NDArray[np.int64],
    sizes: Sequence[int],
    *,
    first_only: bool,
) -> FloatArray:
    """One post-LN layer over packed rows; with ``first_only``, the output rows of first tokens."""
    heads, hidden = encoder.heads, encoder.hidden
    qkv = x @ layer.qkv
    qkv += layer.qkv_bias
    split = qkv.reshape(x.shape[0], 3, heads, hidden // heads)
    context = np.empty((len(sizes) if first_only else x.shape[0], hidden), np.float32)
    for index, (start, size) in enumerate(zip(starts.tolist(), sizes, strict=True)):
        part = split[start : start + size]
        q = part[:1, 0] if first_only else part[:, 0]  # [queries, heads, head_dim]
        scores = softmax(q.transpose(1, 0, 2) @ part[:, 1].transpose(1, 2, 0))  # [heads, queries, size]
        attended = (scores @ part[:, 2].transpose(1, 0, 2)).transpose(1, 0, 2).reshape(-1, hidden)
        if first_only:
            context[index] = attended[0]
        else:
            context[start : start + size] = attended
    residual = x[starts] if first_only else x
    return finish_layer(layer, context, residual, encoder.eps)
