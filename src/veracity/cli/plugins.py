"""``veracity plugins``: every embedder, composer, document format and OCR engine a name can pick,
veracity's own and those installed packages register (:mod:`veracity.model.registry`).

Listing reads names only: nothing is imported, so a plugin that fails to load is listed and then
named in the error of the command that uses it (``--check`` loads each one and says which fail).
"""

from __future__ import annotations

import json

import click

from ..model.errors import ConfigError
from ..model.registry import COMPOSERS, EMBEDDERS, OCR_ENGINES, PARSERS, Registry
from .common import EXIT_FAILED

__all__ = ["plugins_command"]

REGISTRIES: tuple[Registry, ...] = (EMBEDDERS, COMPOSERS, PARSERS, OCR_ENGINES)


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per name, one per line.")
@click.option("--check", is_flag=True, help="Load each one; exit 1 when one fails to load.")
def plugins_command(as_json: bool, check: bool) -> None:
    """The embedders, composers, document formats and OCR engines that can be named (--embedder,
    --composer, files by suffix, --ocr), built-in and from installed packages (entry point groups
    veracity.embedders, veracity.composers, veracity.parsers, veracity.ocr)."""
    failed = 0
    for registry in REGISTRIES:
        if not as_json:
            click.echo(f"\n{registry.kind} (entry point group {registry.group})")
        for entry in registry.entries():
            problem = None
            if check and not entry.shadowed:
                try:
                    registry[entry.name]
                except ConfigError as exc:
                    problem, failed = str(exc), failed + 1
            if as_json:
                row = {"kind": registry.kind, "name": entry.name, "target": entry.target,
                       "origin": entry.origin, "shadowed": entry.shadowed, "error": problem}  # fmt: skip
                click.echo(json.dumps(row, ensure_ascii=False, sort_keys=True))
                continue
            note = "  (not used: a built-in holds this name)" if entry.shadowed else ""
            click.echo(f"  {entry.name:<12} {entry.origin:<20} {entry.target}{note}")
            if problem:
                click.echo(f"      FAILS TO LOAD: {problem}")
    if failed:
        raise SystemExit(EXIT_FAILED)
