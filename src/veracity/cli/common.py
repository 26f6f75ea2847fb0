"""What every command module shares: library errors as clean CLI errors with
their exit status, the ``--kb``, ``--no-wait`` and ``--check`` options, opening
a knowledge base, the progress bar.

Exit status (every command):

====  =====================================================================
0     done
1     the command failed or refused (bad input, not found, rejected files,
      a stale compare-and-set, failed verification, a failed case)
2     usage error (a bad option or argument)
3     another writer holds the knowledge base (``--no-wait``)
4     the storage refused: disk full, read-only file system, permission denied
5     the knowledge base is damaged (integrity check failed, not a database)
      or was written by a newer veracity
====  =====================================================================

This module imports only click at import time (commands start fast); the
library is imported inside the functions that use it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import click

from ..model.registry import COMPOSERS, EMBEDDERS, Registry
from ..reader.runtimes import RUNTIMES

if TYPE_CHECKING:
    from ..catalog.lock import WriterInfo
    from ..pipeline.engine import Engine

F = TypeVar("F", bound=Callable[..., Any])
"""A click command function, as a decorator takes and returns it."""

EXIT_FAILED: Final = 1
EXIT_BUSY: Final = 3
EXIT_STORAGE: Final = 4
EXIT_DAMAGED: Final = 5


class KnowledgeBaseLocation(click.ParamType):
    """``--kb``: a knowledge-base directory (a ``Path``) or a ``postgresql://`` URL (kept as text)."""

    name = "DIR|URL"

    def __init__(self, *, exists: bool = False) -> None:
        """``exists``: a directory must exist already (a URL is checked when it is opened)."""
        self.exists = exists

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """A URL as text, anything else as a ``Path`` (which must be a directory when ``exists``)."""
        if isinstance(value, Path):
            text = str(value)
        else:
            text = str(value).strip()
            if text.lower().startswith(("postgresql://", "postgres://")):
                return text
        path = Path(text)
        if path.exists() and not path.is_dir():
            self.fail(f"{text!r} is a file; give a directory or a postgresql:// URL", param, ctx)
        if self.exists and not path.is_dir():
            self.fail(f"directory {text!r} does not exist", param, ctx)
        return path


class RegistryChoice(click.Choice[str]):
    """The names of a registry (:mod:`veracity.model.registry`), read when first shown or checked:
    built-ins and installed plugins, without importing any of them."""

    def __init__(self, registry: Registry, *extra: str) -> None:
        self.registry, self.extra = registry, extra
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        """The registry's names, then the extra ones (``none``)."""
        return (*self.registry.names(), *self.extra)

    @choices.setter
    def choices(self, _: object) -> None:
        pass  # click sets them in __init__; they are the registry's


EMBEDDER_CHOICE: Final = RegistryChoice(EMBEDDERS)
"""The embedders' names (``use``, ``e5``, ``fake`` and any a plugin registers)."""


def embedder_option(help: str | None = "Dense model.", *, default: str | None = None) -> Callable[[F], F]:
    """``--embedder``: one of :data:`EMBEDDER_CHOICE`, passed as ``embedder``; a ``default`` other
    than ``None`` is shown in the help."""
    return click.option(
        "--embedder",
        type=EMBEDDER_CHOICE,
        default=default,
        show_default=True if default is not None else None,
        help=help,
    )


def guard_runtime_option(name: str = "--runtime") -> Callable[[F], F]:
    """``name``: which runtime computes a trained guard's scores, passed as ``guard_runtime``
    (``None`` for ``auto``: :func:`veracity.guard.model.default_runtime`)."""
    return click.option(
        name,
        "guard_runtime",
        type=click.Choice(["auto", *RUNTIMES]),
        default="auto",
        show_default=True,
        callback=lambda _context, _param, value: None if value == "auto" else value,
        help="What computes the guard's scores: auto picks onnx-int8 where onnxruntime is installed and "
        "the guard's card calibrated it, else onnx-fp32 with onnxruntime, else numpy (numpy and onnx-fp32 "
        "give the same scores).",
    )


KB_ENV: Final = "VERACITY_KB"
"""Where ``--kb`` is read from when the option is not given."""



def kb_option(help: str, *, exists: bool = False, required: bool = True) -> Callable[[F], F]:
    """``--kb`` (or ``$VERACITY_KB``): a knowledge base's directory or ``postgresql://`` URL, passed
    as ``kb_dir``; ``exists`` when the command reads one that must be there."""
    return click.option(
        "--kb",
        "kb_dir",
        required=required,
        envvar=KB_ENV,
        type=KnowledgeBaseLocation(exists=exists),
        help=help,
    )


KB_OPTION = kb_option("Knowledge base: a directory or a postgresql:// URL (or $VERACITY_KB).", exists=True)


def print_json(data: Any) -> None:
    """Canonical JSON on stdout."""
    from ..pipeline.render import canonical_json

    click.echo(canonical_json(data), nl=False)


def print_table(rows: list[dict[str, Any]], title: str | None = None, *, whole: tuple[str, ...] = ()) -> None:
    """A table of ``rows`` (their keys are the columns) on stdout, at least 120 columns wide.

    The first column and the ``whole`` ones are never wrapped (ids, paths).
    """
    import shutil

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ..text.display import printable

    table = Table(title=title, show_lines=False)
    for index, column in enumerate(rows[0] if rows else []):
        table.add_column(column, no_wrap=index == 0 or column in whole, overflow="fold")
    for row in rows:  # cells are data: control characters and rich markup shown, not obeyed
        table.add_row(*(escape(printable(value)) for value in row.values()))
    Console(width=max(120, shutil.get_terminal_size().columns)).print(table)


READER_URL_ENV: Final = "VERACITY_READER_URL"
"""``veracity.kb.backends.READER_URL_ENV`` (this module imports only click at import time)."""

READ_URL_OPTION = click.option(
    "--read-url",
    metavar="URL",
    default=None,
    help="Read answers and searches at this postgresql:// URL: a reader role ('veracity pg reader') "
    "on the primary or on a streaming replica ('veracity pg replica'); writes stay on --kb. "
    "The same as setting $VERACITY_READER_URL.",
)


def use_read_url(read_url: str | None, kb: Path | str | None) -> None:
    """``--read-url``: this process's tenant-scoped reads (and its service workers') go to ``read_url``.

    It sets ``VERACITY_READER_URL``, the one route every store opened afterwards reads
    (:func:`veracity.kb.backends.open_store`), so service worker processes inherit it.
    """
    if read_url is None:
        return
    schemes = ("postgresql://", "postgres://")
    if not read_url.strip().lower().startswith(schemes):
        raise click.BadParameter(f"{read_url!r} is not a postgresql:// URL", param_hint="--read-url")
    if not (isinstance(kb, str) and kb.strip().lower().startswith(schemes)):
        raise click.BadParameter(
            "reads of a directory knowledge base stay in its file; give --kb a postgresql:// URL "
            "(the primary) to read another server",
            param_hint="--read-url",
        )
    os.environ[READER_URL_ENV] = read_url.strip()


NO_WAIT_OPTION = click.option(
    "--no-wait",
    is_flag=True,
    help="Exit at once (status 3) when another writer holds the knowledge base, instead of waiting.",
)
CHECK_OPTION = click.option(
    "--check",
    is_flag=True,
    help="Run SQLite's integrity check on the knowledge base first (status 5 if damaged).",
)


class CommandFailed(click.ClickException):
    """A library error as one line on stderr and its exit status (see the module docstring)."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]  # click reads it per instance


def exit_code_of(exc: BaseException) -> int:
    """The documented exit status of a library error."""
    from ..model.errors import CorruptStorageError, NewerFormatError, StorageError, WriterBusyError

    if isinstance(exc, WriterBusyError):
        return EXIT_BUSY
    if isinstance(exc, CorruptStorageError | NewerFormatError):
        return EXIT_DAMAGED
    if isinstance(exc, StorageError):
        return EXIT_STORAGE
    return EXIT_FAILED


@contextmanager
def library_errors() -> Iterator[None]:
    """Library errors, and storage faults that escaped as SQLite or OS errors, as one clean line."""
    from ..model.errors import VeracityError

    try:
        yield
    except VeracityError as exc:
        raise CommandFailed(str(exc), exit_code_of(exc)) from None
    except Exception as exc:  # click's own exceptions pass: they are no storage faults
        fault = _storage_fault(exc)
        if fault is None:
            raise
        raise CommandFailed(str(fault), exit_code_of(fault)) from None


def _storage_fault(exc: BaseException) -> Exception | None:
    """A storage fault (disk full, read-only, permission, damaged file, SQLite busy) as a library error."""
    import apsw

    from ..catalog.faults import storage_error
    from ..model.errors import WriterBusyError

    if isinstance(exc, apsw.BusyError | apsw.LockedError):
        return WriterBusyError(
            f"the knowledge base stayed locked by another program ({exc}); run the command again later"
        )
    if isinstance(exc, apsw.Error | OSError):
        return storage_error(exc, getattr(exc, "filename", None) or "the knowledge base")
    return _database_fault(exc)


def _database_fault(exc: BaseException) -> Exception | None:
    """A PostgreSQL refusal that escaped as psycopg's error, as a library error (psycopg is only
    looked at when something imported it: a SQLite command never loads it)."""
    import sys

    from ..model.errors import StorageError

    psycopg = sys.modules.get("psycopg")
    if psycopg is None or not isinstance(exc, psycopg.Error):
        return None
    said = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return StorageError(
            f"the database role may not do this ({said}): --kb takes the knowledge base owner's URL; "
            "a reader role belongs in 'veracity serve --read-url' (docs/postgresql.md)",
            path="the database",
        )
    return StorageError(f"the database refused: {said}", path="the database")


def tell_waiting(holder: WriterInfo | None) -> None:
    """Say on stderr whom a write waits for (once, when waiting starts)."""
    who = holder.describe() if holder is not None else "another process"
    click.echo(f"waiting for another writer ({who}); --no-wait exits instead", err=True)


def writer_options(no_wait: bool) -> dict[str, Any]:
    """How this command's writes wait for another writer: not at all with ``--no-wait``."""
    return {"writer_wait": not no_wait, "on_wait": tell_waiting}


def open_knowledge_base(kb_dir: Path, *, no_wait: bool = False, check: bool = False) -> Engine:
    """Open ``kb_dir`` for a command (``--no-wait``, ``--check`` as given)."""
    from ..kb.directory import open_kb

    return open_kb(kb_dir, check=check, **writer_options(no_wait))


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


def llm_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The composer options shared by ``ask``, ``eval``, ``bench answers`` and ``composer``."""
    options = [
        click.option(
            "--composer",
            type=RegistryChoice(COMPOSERS),
            default=None,
            help="Who writes the claims [default: llm when an endpoint is given or stored].",
        ),
        click.option("--llm-base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1."),
        click.option("--llm-model", help="Model name the endpoint serves; the key: $VERACITY_LLM_API_KEY."),
        click.option("--llm-timeout", type=click.FloatRange(min=0.1), help="Seconds per request [60]."),
        click.option("--llm-stream/--llm-no-stream", default=None, help="Stream the completion."),
        click.option("--llm-context-tokens", type=click.IntRange(min=64), help="Evidence tokens [2048]."),
        click.option(
            "--llm-tokenizer",
            type=click.Choice(["llama.cpp"]),
            help="Count tokens with the server's tokenizer [default: estimate].",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def composer_of(options: dict[str, Any], stored: dict[str, Any] | None = None) -> Any:
    """The composer the ``llm_options`` values (popped from ``options``) and a stored setting ask for."""
    from ..kb.composing import LLMOptions, make_composer

    chosen = LLMOptions(
        composer=options.pop("composer", None),
        base_url=options.pop("llm_base_url", None),
        model=options.pop("llm_model", None),
        timeout_s=options.pop("llm_timeout", None),
        stream=options.pop("llm_stream", None),
        context_tokens=options.pop("llm_context_tokens", None),
        tokenizer=options.pop("llm_tokenizer", None),
    )
    return make_composer(chosen, stored)
