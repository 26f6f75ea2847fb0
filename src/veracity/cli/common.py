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


def print_json(data: Any) -> None:
    """Canonical JSON on stdout."""
    from ..pipeline.render import canonical_json

    click.echo(canonical_json(data), nl=False)


def print_table(
    rows: list[dict[str, Any]], title: str | None = None, *, whole: tuple[str, ...] = ()
) -> None:
    """A table of ``rows`` (their keys are the columns) on stdout, at least 120 columns wide.

    The first column and the ``whole`` ones are never wrapped (ids, paths).
    """
    import shutil

    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for index, column in enumerate(rows[0] if rows else []):
        table.add_column(column, no_wrap=index == 0 or column in whole, overflow="fold")
    for row in rows:
        table.add_row(*(str(value) for value in row.values()))
    Console(width=max(120, shutil.get_terminal_size().columns)).print(table)


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
    """A ``progress(stage, done, total)`` callback drawing one bar per stage on stderr, or ``None``.

    Each bar shows done/total, the rate (files/s, chunks/s) and the time left;
    the embedding stage moves after every embedding call.
    """
    if not enabled:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    units = {"parse": "files", "index": "chunks"}
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        transient=True,
        console=stderr_console(),
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            label = {"parse": "parse + chunk (files)", "index": "index + embed (chunks)"}.get(stage, stage)
            if stage not in tasks:
                tasks[stage] = bar.add_task(label, total=total or None, rate="")
            bar.update(tasks[stage], completed=done, total=total or None)
            speed = next(task.speed for task in bar.tasks if task.id == tasks[stage])
            rate = f"{speed:,.1f} {units.get(stage, 'items')}/s" if speed else ""
            bar.update(tasks[stage], rate=rate)

        yield update


def stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)
