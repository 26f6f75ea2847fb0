"""Where a reader's files live: ``<name>.npz`` (weights) and ``<name>.json`` (model card), in this
package unless a folder is given."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def shipped_files(name: str, folder: str | Path | None = None) -> tuple[Path, Path]:
    """The weights and model card paths of reader ``name``."""
    base = Path(folder) if folder is not None else Path(str(resources.files("veracity") / "reader"))
    return base / f"{name}.npz", base / f"{name}.json"
