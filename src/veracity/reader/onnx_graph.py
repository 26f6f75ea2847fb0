"""The encoder's layers as an ONNX graph, written here with a few lines of protobuf encoding (the
``onnx`` package is not needed, torch is not used): what :mod:`.ort_head` runs with onnxruntime.

Two precisions (``mode``):

- ``fp32``: every matmul in float32, the same arithmetic as :class:`~.encoder.Encoder` (the logits
  agree with numpy's to about 1e-5);
- ``int8``: every weight matmul as ``com.microsoft.DynamicQuantizeMatMul``, int8 weights with one
  scale per output column (the kernel onnxruntime's ``quantize_dynamic`` ends in). Its activations
  are quantized on each call with one scale for the whole input tensor, so a sequence's result
  depends on what else is in its batch: run it one sequence at a time for results that depend on
  the sequence alone.

The graph starts after the embeddings: its inputs are the embedded, LayerNormed states
``[batch, tokens, hidden]`` (numpy computes them, :meth:`~.encoder.Encoder.embed_tokens`: the graph
then carries no 250k-row word table) and the ``attention_mask``. With ``first_only`` the last layer
computes its attention output and feed-forward block for each sequence's first token alone (its
keys and values still come from every token), as :mod:`.packed` does.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..model.errors import ConfigError
from .encoder import Encoder
from .weights import quantize_int8_rows

__all__ = ["MODES", "Graph", "embedding_graph", "layers_graph", "one_logit_graph"]

MODES = ("fp32", "int8")
FLOAT, INT64 = 1, 7
"""ONNX element types of the graphs' inputs and outputs."""


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes | str | int | float) -> bytes:
    if isinstance(payload, str):
        payload = payload.encode()
    if isinstance(payload, bytes):
        return _varint(number << 3 | 2) + _varint(len(payload)) + payload
    if isinstance(payload, float):
        return _varint(number << 3 | 5) + struct.pack("<f", payload)
    return _varint(number << 3) + _varint(payload)


_ONNX_TYPES = {
    np.dtype(np.float32): 1,
    np.dtype(np.uint8): 2,
    np.dtype(np.int8): 3,
    np.dtype(np.int32): 6,
    np.dtype(np.int64): 7,
}


def _tensor(name: str, array: np.ndarray) -> bytes:
    """TensorProto: dims (1), data_type (2), name (8), raw_data (9)."""
    array = np.array(array, order="C")  # (not ascontiguousarray: it turns a scalar into shape (1,))
    dims = b"".join(_field(1, int(d)) for d in array.shape)
    return dims + _field(2, _ONNX_TYPES[array.dtype]) + _field(8, name) + _field(9, array.tobytes())


def _attribute(name: str, value: int | float | list[int]) -> bytes:
    """AttributeProto: name (1), f (2), i (3), ints (8), type (20: FLOAT 1, INT 2, INTS 7)."""
    if isinstance(value, float):
        return _field(1, name) + _field(2, value) + _field(20, 1)
    if isinstance(value, int):
        return _field(1, name) + _field(3, value) + _field(20, 2)
    return _field(1, name) + b"".join(_field(8, v) for v in value) + _field(20, 7)


def _value_info(name: str, elem_type: int, dims: Sequence[str | int]) -> bytes:
    """ValueInfoProto with a tensor type; string dims are symbolic."""
    shape = b"".join(_field(1, _field(2 if isinstance(d, str) else 1, d)) for d in dims)
    return _field(1, name) + _field(2, _field(1, _field(1, elem_type) + _field(2, shape)))


class Graph:
    """Collects nodes and initializers; :meth:`model` serializes a ModelProto (opset 17 and
    onnxruntime's ``com.microsoft`` domain)."""

    def __init__(self) -> None:
        self.nodes: list[bytes] = []
        self.inits: list[bytes] = []
        self.count = 0

    def const(self, array: npt.ArrayLike, name: str | None = None) -> str:
        self.count += 1
        name = name or f"c{self.count}"
        self.inits.append(_tensor(name, np.asarray(array)))
        return name

    def op(self, op_type: str, inputs: list[str], domain: str = "", **attrs: int | float | list[int]) -> str:
        self.count += 1
        out = f"t{self.count}"
        body = b"".join(_field(1, i) for i in inputs) + _field(2, out) + _field(3, f"n{self.count}")
        body += _field(4, op_type) + b"".join(_field(5, _attribute(k, v)) for k, v in attrs.items())
        self.nodes.append(body + (_field(7, domain) if domain else b""))
        return out

    def model(
        self,
        inputs: Sequence[tuple[str, int, Sequence[str | int]]],
        output: str,
        dims: Sequence[str | int],
    ) -> bytes:
        """The graph as a ModelProto with ``inputs`` (name, element type, dims) and one float
        output ``output`` of shape ``dims``."""
        graph = b"".join(_field(1, n) for n in self.nodes) + _field(2, "e5")
        graph += b"".join(_field(5, t) for t in self.inits)
        graph += b"".join(_field(11, _value_info(*spec)) for spec in inputs)
        graph += _field(12, _value_info(output, FLOAT, dims))
        opsets = _field(8, _field(1, "") + _field(2, 17)) + _field(
            8, _field(1, "com.microsoft") + _field(2, 1)
        )
        return _field(1, 8) + _field(2, "veracity") + _field(7, graph) + opsets


def embedding_graph(g: Graph, encoder: Encoder, used: npt.NDArray[np.int64]) -> str:
    """Word + position + token-type embeddings and their LayerNorm over the input ``input_ids``
    (indexes into the word rows ``used``: the table is cut to them); returns ``[batch, tokens, H]``."""
    words = np.ascontiguousarray(encoder.words.rows(used[None, :])[0], dtype=np.float32)
    x = g.op("Gather", [g.const(words), "input_ids"])
    length = g.op("Gather", [g.op("Shape", ["input_ids"]), g.const(np.array(1, np.int64))])
    positions = g.op("Range", [g.const(np.array(0, np.int64)), length, g.const(np.array(1, np.int64))])
    x = g.op("Add", [x, g.op("Gather", [g.const(np.asarray(encoder.positions, np.float32)), positions])])
    x = g.op("Add", [x, g.const(np.asarray(encoder.token_types[0], np.float32))])
    return _norm(g, x, encoder.embedding_ln, encoder.eps)


def _norm(g: Graph, value: str, pair: tuple[np.ndarray, np.ndarray], eps: float) -> str:
    scale, shift = g.const(pair[0]), g.const(pair[1])
    return g.op("LayerNormalization", [value, scale, shift], axis=-1, epsilon=eps)


def layers_graph(g: Graph, encoder: Encoder, states: str, mode: str, *, first_only: bool = False) -> str:
    """``encoder``'s layers over ``states`` ``[batch, tokens, H]`` and the input ``attention_mask``;
    returns the last layer's states ``[batch, tokens, H]``, or with ``first_only`` its first-token
    states ``[batch, H]``. ``mode``: ``fp32`` or ``int8`` (see the module docstring)."""
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    hidden, heads = encoder.hidden, encoder.heads

    def ints(value: list[int] | int) -> str:
        return g.const(np.array(value, np.int64))

    def dense(value: str, weight: np.ndarray, bias: np.ndarray) -> str:  # weight: [in, out]
        if mode == "int8":
            codes, scales = quantize_int8_rows(np.ascontiguousarray(weight.T))
            zero = g.const(np.zeros(len(scales), np.int8))
            args = [value, g.const(codes.T.copy()), g.const(scales), zero, g.const(bias)]
            return g.op("DynamicQuantizeMatMul", args, domain="com.microsoft")
        return g.op("Add", [g.op("MatMul", [value, g.const(weight)]), g.const(bias)])

    padding = g.op("Sub", [g.const(np.float32(1.0)), g.op("Cast", ["attention_mask"], to=FLOAT)])
    bias = g.op("Unsqueeze", [g.op("Mul", [padding, g.const(np.float32(-1e9))]), ints([1, 2])])
    x = states
    for index, layer in enumerate(encoder.layers):  # Q, K, V fused, the 1/sqrt(d) scale in Q
        last = first_only and index == len(encoder.layers) - 1
        qkv = dense(x, layer.qkv, layer.qkv_bias)
        qkv = g.op("Reshape", [qkv, ints([0, 0, 3, heads, hidden // heads])])
        qkv = g.op("Transpose", [qkv], perm=[2, 0, 3, 1, 4])  # [3, batch, heads, tokens, d]
        q, k, v = (g.op("Gather", [qkv, ints(j)], axis=0) for j in range(3))
        if last:  # the first token's query alone: [batch, heads, 1, d]
            q = g.op("Slice", [q, ints([0]), ints([1]), ints([2])])
            x = g.op("Slice", [x, ints([0]), ints([1]), ints([1])])
        scores = g.op("Add", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]), bias])
        context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        context = g.op("Transpose", [context], perm=[0, 2, 1, 3])
        context = g.op("Reshape", [context, ints([0, 0, hidden])])
        x = _norm(g, g.op("Add", [dense(context, layer.out, layer.out_bias), x]), layer.ln1, encoder.eps)
        act = g.op("Gelu", [dense(x, layer.up, layer.up_bias)], domain="com.microsoft")  # the exact erf form
        x = _norm(g, g.op("Add", [dense(act, layer.down, layer.down_bias), x]), layer.ln2, encoder.eps)
    if first_only:
        x = g.op("Gather", [x, ints(0)], axis=1)
    return x


def one_logit_graph(encoder: Encoder, head: np.ndarray, head_bias: float, mode: str) -> bytes:
    """A one-logit model (the encoder's layers, then ``head`` on the first token's state) over the
    inputs ``states`` ``[batch, tokens, H]`` and ``attention_mask``; output ``logit`` ``[batch, 1]``."""
    g = Graph()
    first = layers_graph(g, encoder, "states", mode, first_only=True)
    weight = g.const(np.asarray(head, np.float32).reshape(-1, 1))
    logit = g.op("Add", [g.op("MatMul", [first, weight]), g.const(np.array([head_bias], np.float32))])
    inputs: list[tuple[str, int, Sequence[str | int]]] = [
        ("states", FLOAT, ["batch", "tokens", encoder.hidden]),
        ("attention_mask", INT64, ["batch", "tokens"]),
    ]
    return g.model(inputs, g.op("Identity", [logit]), ["batch", 1])
