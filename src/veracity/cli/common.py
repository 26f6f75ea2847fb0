"""What every command module shares: library errors as clean CLI errors, the
``--kb`` option, opening a knowledge base, the progress bar."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from ..model.errors import VeracityError
from ..pipeline.engine import KnowledgeBase

KB_OPTION = click.option(
    "--kb",
    "kb_dir",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Knowledge base directory.",
)


@contextmanager
def library_errors() -> Iterator[None]:
    try:
        yield
    except VeracityError as exc:
        raise click.ClickException(str(exc)) from None


def open_knowledge_base(kb_dir: Path) -> KnowledgeBase:
    from ..kb.directory import open_kb

    return open_kb(kb_dir)


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Any]:
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        console=stderr_console(),
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            label = {"parse": "parse + chunk (files)", "index": "index + embed (chunks)"}.get(stage, stage)
            if stage not in tasks:
                tasks[stage] = bar.add_task(label, total=total or None)
            bar.update(tasks[stage], completed=done, total=total or None)

        yield update


def stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)
