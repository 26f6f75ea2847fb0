"""The sentence reader run by onnxruntime against its numpy runtime, in one process: time per
question and how far the logits move.

For SQuAD 2.0 half-dev *tune* questions (articles 1–8; never a reporting split), each with up to
eight sentences of its paragraph as the candidates (the answer step reads eight,
``pipeline/choice.CHOICE_DEPTH``), the chooser's logits are computed three ways:

- **numpy** (the peer, what an ask runs): packed sequences, float32, the last layer for ``<s>``
  alone (``reader/head.py``);
- **ort fp32**: the same weights as an ONNX graph (written with ``bench_reader_runtime.py``'s
  protobuf writer), padded batches, every graph optimization;
- **ort int8**: every matmul as ``com.microsoft.DynamicQuantizeMatMul`` (int8 weights, one scale
  per output column; activations quantized per call).

Printed per runtime: milliseconds per question (warm, the mean over the questions, after one pass
over all of them), the ratio to numpy, the mean / p99 / max absolute logit difference to numpy,
and how often the best sentence is the same. A model meant to run as int8 would have to be
calibrated as int8: the differences show by how much.

    python benchmarks/bench_chooser_onnx.py [--chooser shipped|PATH.npz] [--questions 150] [--threads 2]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from veracity.bench.shared import datasets_folder
from veracity.reader.choice import Chooser, named_chooser, pair_ids
from veracity.reader.onnx_graph import INT64, Graph, embedding_graph, layers_graph
from veracity.reader.ort_head import OnnxOneLogit
from veracity.text.sentences import split_sentences

TUNE_ARTICLES = 8
"""SQuAD 2.0 half-dev articles 1–8 are the tuning part (``veracity bench answers --part tune``)."""
CANDIDATES = 8


def chooser_graph(chooser: Chooser, used: np.ndarray, mode: str) -> bytes:
    """``chooser`` (its encoder and one-logit head) as ONNX over the word rows ``used``; ``mode``:
    ``fp32`` or ``int8`` (:mod:`veracity.reader.onnx_graph`)."""
    g = Graph()
    first = layers_graph(g, chooser.encoder, embedding_graph(g, chooser.encoder, used), mode, first_only=True)
    head, head_bias = g.const(chooser.head.reshape(-1, 1)), g.const(np.array([chooser.head_bias], np.float32))
    logit = g.op("Add", [g.op("MatMul", [first, head]), head_bias])
    inputs = [(name, INT64, ["batch", "tokens"]) for name in ("input_ids", "attention_mask")]
    return g.model(inputs, g.op("Identity", [logit]), ["batch", 1])


def tune_groups(squad_gz: Path, questions: int) -> list[tuple[str, str, list[str]]]:
    """(question, title, up to eight sentences of its paragraph) for the first ``questions`` of the
    tuning articles, two per paragraph."""
    data = json.loads(gzip.decompress(squad_gz.read_bytes()))
    groups = []
    for article in data["data"][:TUNE_ARTICLES]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            sentences = [context[b:e] for b, e in split_sentences(context)][:CANDIDATES]
            for qa in paragraph["qas"][:2]:
                groups.append((qa["question"], article["title"].replace("_", " "), sentences))
    return groups[:questions]


def per_question_ms(run: Callable[[list[list[int]]], np.ndarray], rows: list[list[list[int]]]) -> float:
    start = time.perf_counter()
    for question_rows in rows:
        run(question_rows)
    return (time.perf_counter() - start) / len(rows) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--chooser", default="shipped", help="shipped, or a chooser's .npz (its card beside it)"
    )
    parser.add_argument("--datasets", type=Path, default=datasets_folder())
    parser.add_argument("--questions", type=int, default=150)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import onnxruntime as ort

    if args.datasets is None:
        sys.exit("no shared datasets folder found: pass --datasets")
    chooser = named_chooser(args.chooser)
    if chooser is None:
        sys.exit("--chooser names a chooser: shipped or a .npz")
    groups = tune_groups(args.datasets / "squad2_dev_half" / "original" / "dev-v2.0.json.gz", args.questions)
    rows = [[pair_ids(chooser.tokenizer, q, title, s) for s in sentences] for q, title, sentences in groups]
    used = np.unique(np.concatenate([np.asarray(row) for question_rows in rows for row in question_rows]))
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    reference = [chooser.logits(question_rows) for question_rows in rows]
    numpy_ms = per_question_ms(chooser.logits, rows)
    print(
        f"chooser {chooser.name} {chooser.version}: {len(rows)} SQuAD tune questions, "
        f"{sum(map(len, rows))} pairs; onnxruntime {ort.__version__}, {args.threads} threads; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print("| runtime | ms / question | vs numpy | logit diff mean / p99 / max | same best sentence |")
    print("|---|---|---|---|---|")
    print(f"| numpy (peer) | {numpy_ms:.1f} | 1.00 | 0 | 1.000 |")
    for mode in ("fp32", "int8"):
        session = ort.InferenceSession(chooser_graph(chooser, used, mode), options, ["CPUExecutionProvider"])

        def run(question_rows: list[list[int]], session: ort.InferenceSession = session) -> np.ndarray:
            width = max(map(len, question_rows))
            ids = np.zeros((len(question_rows), width), np.int64)
            mask = np.zeros_like(ids)
            for i, row in enumerate(question_rows):
                ids[i, : len(row)] = np.searchsorted(used, row)
                mask[i, : len(row)] = 1
            return np.asarray(session.run(None, {"input_ids": ids, "attention_mask": mask})[0]).reshape(-1)

        row(f"ort {mode}", run, rows, reference, numpy_ms)
    for mode in ("fp32", "int8"):  # the package's runtime (the guard's): its batching and optimization level
        runtime = OnnxOneLogit(chooser.encoder, chooser.head, chooser.head_bias, mode)
        row(f"ort_head {mode}", runtime.logits, rows, reference, numpy_ms)


def row(
    label: str,
    run: Callable[[list[list[int]]], np.ndarray],
    rows: list[list[list[int]]],
    reference: list[np.ndarray],
    numpy_ms: float,
) -> None:
    """One table row: ``run``'s time per question against numpy's, and how far its logits are."""
    got = [run(question_rows) for question_rows in rows]  # also the warm-up
    ms = per_question_ms(run, rows)
    diff = np.concatenate([np.abs(a - b) for a, b in zip(got, reference, strict=True)])
    same = np.mean([np.argmax(a) == np.argmax(b) for a, b in zip(got, reference, strict=True)])
    spread = f"{diff.mean():.4f} / {np.quantile(diff, 0.99):.4f} / {diff.max():.4f}"
    print(f"| {label} | {ms:.1f} | {numpy_ms / ms:.2f} | {spread} | {same:.3f} |")


if __name__ == "__main__":
    main()
