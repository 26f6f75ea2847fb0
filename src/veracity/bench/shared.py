"""Where the shared benchmark data sets live: ``$VERACITY_DATASETS``, else ``shared/datasets``
beside the project's checkout (``<checkout>/../shared/datasets``).

The data sets are not part of the package; tests and benchmarks that need them find them
here and skip (tests) or stop with this message (scripts) when they are absent.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Final

PROJECT_ROOT: Final = Path(__file__).resolve().parents[3]
"""The checkout this module runs from (``src/veracity/bench/shared.py`` → three folders up)."""

MISSING: Final = (
    "the shared data sets were not found: set VERACITY_DATASETS to the folder holding "
    "squad2_dev_half/, cmrc2018/, drcd/, scifact/ (by default ../shared/datasets beside the checkout)"
)


def datasets_folder() -> Path | None:
    """The shared data-set folder, or ``None`` when it is not on this machine."""
    configured = os.environ.get("VERACITY_DATASETS")
    if configured:
        return Path(configured) if Path(configured).is_dir() else None
    candidate = PROJECT_ROOT.parent / "shared" / "datasets"
    return candidate if candidate.is_dir() else None


def shared_folder() -> Path | None:
    """The shared folder (``datasets/``, ``spec/``) beside the checkout, or ``None``."""
    datasets = datasets_folder()
    return datasets.parent if datasets is not None else None


def add_fit_arguments(
    parser: argparse.ArgumentParser, *, layers: int, epochs: float, batch_tokens: int
) -> None:
    """The fit's options every training command takes, with that command's defaults: ``--layers``,
    ``--epochs``, ``--learning-rate`` and ``--batch-tokens`` (read by ``tuned.train_settings``)."""
    parser.add_argument(
        "--layers", type=int, default=layers, help=f"encoder layers kept (default {layers} of 12)"
    )
    parser.add_argument("--epochs", type=float, default=epochs)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--batch-tokens", type=int, default=batch_tokens, help="padded tokens per batch")


def training_parser(
    module: str, description: str | None, *, layers: int, epochs: float, batch_tokens: int
) -> argparse.ArgumentParser:
    """The parser of the training command ``python -m <module>``, with its module docstring as
    the description and the fit's options (:func:`add_fit_arguments`) at that command's defaults."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {module}",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_fit_arguments(parser, layers=layers, epochs=epochs, batch_tokens=batch_tokens)
    return parser


def add_run_arguments(parser: argparse.ArgumentParser, name: str, kind: str) -> None:
    """The options every training command of a model shipped in ``src/veracity/<kind>/`` shares:
    ``--limit``, ``--seed``, ``--threads``, ``--name``, ``--out`` and ``--ship``."""
    parser.add_argument("--limit", type=int, default=None, help="train on N examples (a smoke run)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--name", default=name)
    parser.add_argument("--out", type=Path, default=Path("build") / kind)
    parser.add_argument("--ship", action="store_true", help=f"write into the package (src/veracity/{kind}/)")
