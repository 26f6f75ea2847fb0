"""Knowledge-base directory commands: ``veracity ingest``, ``veracity init-demo`` and
``veracity composer`` (the stored LLM setting).

Registered on the ``veracity`` group by :mod:`veracity.cli.main`. Thin: parse,
call :mod:`veracity.kb.directory` / :mod:`veracity.ingest.run`, print a summary.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Final

import click

from ..model.registry import OCR_ENGINES
from ..parse.limits import DEFAULT_LIMITS, MiB
from ..text.display import printable
from .common import (
    CHECK_OPTION,
    KB_OPTION,
    NO_WAIT_OPTION,
    F,
    KnowledgeBaseLocation,
    RegistryChoice,
    embedder_option,
    kb_option,
    library_errors,
    llm_options,
    print_json,
    progress_bar,
    writer_options,
)
from .summary import ingest_json, ingest_summary

__all__ = ["composer_command", "copy_command", "ingest_command", "init_demo_command", "kb_group"]


_LIMIT_HELP: Final = (
    ("max_bytes", "Reject files larger than this, unread"),
    ("max_text_chars", "Reject a file whose text (decoded, or extracted from PDF/DOCX) is longer"),
    ("max_chunks", "Reject a document of more chunks"),
    ("max_unzipped_bytes", "Reject a DOCX expanding past this"),
    ("max_zip_ratio", "Reject a DOCX member expanding more than this many times"),
    ("max_html_depth", "Read HTML nested deeper as flat text"),
)


def input_limit_options(command: F) -> F:
    """``--max-bytes`` … ``--max-html-depth``: each an ``InputLimits`` field, its default shown."""
    for name, text in reversed(_LIMIT_HELP):
        default = getattr(DEFAULT_LIMITS, name)
        if isinstance(default, float):
            kind: click.ParamType = click.FloatRange(min=1)
            shown = f"{default:g}"
        else:
            kind = click.IntRange(min=1)
            shown = f"{default // MiB} MiB" if name.endswith("_bytes") else f"{default:,}"
        command = click.option("--" + name.replace("_", "-"), type=kind, help=f"{text} [{shown}].")(command)
    return command


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@kb_option("Knowledge base: a directory or a postgresql:// URL (created if it holds none; or $VERACITY_KB).")
@click.option(
    "--tenant",
    help="Tenant of files whose metadata names none (others are rejected); "
    "at the first ingest it becomes the knowledge base's default tenant [default: default].",
)
@click.option("--roles", help="Comma-separated roles to define for the tenant (e.g. public,support).")
@click.option(
    "--strict",
    is_flag=True,
    help="Reject files missing governance fields (tenant, valid_from, status, visibility, trust) "
    "instead of taking the defaults.",
)
@click.option("--restore", is_flag=True, help="Ingest sources deleted earlier (and revive withdrawn ones).")
@click.option("--prune", is_flag=True, help="Withdraw documents whose files have gone from the folders.")
@click.option("--delete", "delete_pruned", is_flag=True, help="With --prune: delete them instead.")
@embedder_option("Dense model of a new knowledge base (default use); an existing one keeps its own.")
@click.option(
    "--metadata",
    "metadata_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="YAML/JSON file mapping paths or globs to governance metadata.",
)
@input_limit_options
@click.option(
    "--ocr",
    "ocr_engine",
    type=RegistryChoice(OCR_ENGINES, "none"),
    default="rapidocr",
    show_default=True,
    help="OCR engine for scanned PDF pages and images ('ocr' extra); none: never OCR.",
)
@click.option("--images", is_flag=True, help="Also read image files (.png, .jpg, .tiff) in folders, by OCR.")
@click.option(
    "--follow-symlinks",
    is_flag=True,
    help="Follow symbolic links that lead outside the ingested folders (by default they are reported).",
)
@click.option(
    "--jobs",
    type=click.IntRange(1, 256),
    default=None,
    help="Processes that parse and chunk ahead of the writer [default: the CPUs, at most 8]. "
    "The result is the same for any number; 1 parses in this process.",
)
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show a progress bar.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@NO_WAIT_OPTION
@CHECK_OPTION
def ingest_command(
    paths: tuple[Path, ...],
    kb_dir: Path,
    tenant: str | None,
    roles: str | None,
    strict: bool,
    restore: bool,
    prune: bool,
    delete_pruned: bool,
    embedder: str | None,
    metadata_file: Path | None,
    max_bytes: int | None,
    max_text_chars: int | None,
    max_chunks: int | None,
    max_unzipped_bytes: int | None,
    max_zip_ratio: float | None,
    max_html_depth: int | None,
    ocr_engine: str,
    images: bool,
    follow_symlinks: bool,
    jobs: int | None,
    progress: bool,
    as_json: bool,
    no_wait: bool,
    check: bool,
) -> None:
    """Ingest files or folders into a knowledge base: Markdown (MkDocs, VitePress, Docusaurus),
    reStructuredText (Sphinx), text, HTML, PDF, DOCX; scanned PDF pages by
    OCR, and images (.png, .jpg, .tiff) with --images.

    Governance metadata comes from front matter (Markdown, HTML meta tags), a
    sidecar NAME.meta.yaml, or --metadata. Missing fields take documented
    defaults (status active, visibility public, trust official, valid_from the
    file's modification time, the default tenant, revisions numbered 1, 2, ...),
    counted in the summary; --strict rejects such files instead, naming every
    missing field. PDF and DOCX need the 'pdf' / 'docx' extras, OCR the 'ocr'
    extra. A PDF or image that gives no text, even after OCR, is rejected
    ('no text'); `veracity status` shows what parsing found in every file.

    Idempotent: documents already in the catalog are left alone and nothing
    is embedded again; a changed file re-embeds only its changed chunks.
    Prints what was added, revised, unchanged, skipped and rejected.

    Each file is bounded (size, text, chunks, DOCX expansion, HTML depth; the
    --max-* options raise a bound): a file over one is rejected by name and
    the rest go in. Metadata YAML may not use anchors or aliases. Symbolic
    links leading outside the folder are reported, not followed.

    One writer at a time: a second ingest (or withdraw, delete, reindex...)
    on the same knowledge base waits for the first, saying whom it waits for;
    with --no-wait it exits with status 3 instead.
    """
    from ..index.embedders import make_embedder
    from ..ingest.run import ingest_paths
    from ..ingest.writing import writing
    from ..kb.directory import check_file, open_or_create_kb, write_manifest
    from ..parse.limits import InputLimits
    from ..parse.ocr import OcrSettings

    if tenant is not None and not tenant.strip():
        raise click.BadParameter("the tenant is empty; give a name or leave it out", param_hint="--tenant")
    role_list = [r.strip() for r in (roles or "").split(",") if r.strip()]
    if roles is not None and not role_list:
        raise click.BadParameter("no role named; give e.g. --roles public,support", param_hint="--roles")
    if delete_pruned and not prune:
        raise click.BadParameter("--delete deletes what --prune finds; add --prune", param_hint="--delete")
    given: dict[str, Any] = {
        "max_bytes": max_bytes, "max_text_chars": max_text_chars, "max_chunks": max_chunks,
        "max_unzipped_bytes": max_unzipped_bytes, "max_zip_ratio": max_zip_ratio,
        "max_html_depth": max_html_depth,
    }  # fmt: skip
    limits = InputLimits(**{name: value for name, value in given.items() if value is not None})
    with library_errors():
        model = make_embedder(embedder) if embedder else None
        kb = open_or_create_kb(kb_dir, model, **writer_options(no_wait))
        if check:
            check_file(kb.catalog.store)  # type: ignore[arg-type]
        with writing(kb, "ingest"), progress_bar(progress and not as_json) as callback:
            report = ingest_paths(
                kb,
                list(paths),
                tenant=tenant,
                roles=role_list,
                metadata_file=metadata_file,
                limits=limits,
                follow_symlinks=follow_symlinks,
                ocr=None if ocr_engine == "none" else OcrSettings(engine=ocr_engine),
                images=images,
                jobs=jobs,
                progress=callback,
                strict=strict,
                restore=restore,
                prune=prune,
                delete_pruned=delete_pruned,
            )
            write_manifest(kb_dir, kb)
    if as_json:
        print_json(ingest_json(report, kb_dir))
    else:
        for line in ingest_summary(report, kb_dir):
            click.echo(line)
        for source, reason in report.rejected:
            click.echo(f"  rejected {printable(source)}: {printable(reason)}", err=True)
    if report.rejected:
        sys.exit(1)


@click.command("init-demo")
@kb_option("A new directory or an empty postgresql:// database (or $VERACITY_KB).")
@embedder_option()
def init_demo_command(kb_dir: Path, embedder: str | None) -> None:
    """Write the bundled Starship Workbench demo into a new knowledge base directory."""
    from ..index.embedders import make_embedder
    from ..kb.directory import init_demo_kb

    with library_errors():
        kb = init_demo_kb(kb_dir, make_embedder(embedder) if embedder else None)
        stats = kb.snapshot.stats()  # type: ignore[union-attr]
    click.echo(f"{kb_dir}: {stats.documents} documents, {stats.chunks} chunks, model {stats.model_id}")


@click.group("kb")
def kb_group() -> None:
    """Whole knowledge bases: copy one between a directory and a PostgreSQL database."""


@kb_group.command("copy")
@click.argument("source", type=KnowledgeBaseLocation(exists=True))
@click.argument("destination", type=KnowledgeBaseLocation())
@embedder_option("Model of the copy's index [default: the source's; another one re-embeds every chunk].")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def copy_command(source: Any, destination: Any, embedder: str | None, as_json: bool) -> None:
    """Copy the knowledge base in SOURCE to DESTINATION (a new directory or an empty database).

    Catalog, API keys, ingestion ledger and settings are copied row for row;
    the index is built anew from the catalog with the source's stored vectors
    (nothing is embedded again unless the model differs) and must pass the
    index verification. Either side may be a directory or a postgresql:// URL.
    """
    from ..index.embedders import make_embedder
    from ..kb.copy import copy_kb

    with library_errors():
        report = copy_kb(source, destination, embedder=make_embedder(embedder) if embedder else None)
    if as_json:
        print_json({
            "source": report.source, "destination": report.destination, "rows": report.rows,
            "reused_vectors": report.reused_vectors, "embedded": report.embedded,
            "verification": report.verification.as_dict(), "seconds": round(report.seconds, 3),
        })  # fmt: skip
        return
    rows = ", ".join(f"{count} {table}" for table, count in report.rows.items() if count)
    click.echo(f"copied {report.source} -> {report.destination}: {rows}")
    click.echo(f"  vectors: {report.reused_vectors} reused, {report.embedded} embedded")
    for check in report.verification.checks:
        click.echo(f"  {'ok  ' if check.passed else 'FAIL'} {check.name:9s} {check.detail}")
    click.echo(f"verified in {report.seconds:.1f} s")


@click.command("composer")
@KB_OPTION
@llm_options
@click.option("--json", "as_json", is_flag=True, help="Print the stored setting as JSON.")
def composer_command(kb_dir: Path, as_json: bool, **llm: Any) -> None:
    """Show or store which language model writes this knowledge base's answers.

    With --llm-base-url / --llm-model (and the other --llm-* options) the setting
    is stored in the knowledge base, merged over what it held; `ask` and `serve`
    then write answers with it. --composer extractive forgets it. The API key is
    never stored: it is read from $VERACITY_LLM_API_KEY when answers are written.
    """
    from ..kb.composing import LLMOptions, make_composer
    from ..kb.local import open_local

    chosen = {
        "base_url": llm.pop("llm_base_url"),
        "model": llm.pop("llm_model"),
        "timeout_s": llm.pop("llm_timeout"),
        "stream": llm.pop("llm_stream"),
        "context_tokens": llm.pop("llm_context_tokens"),
        "tokenizer": llm.pop("llm_tokenizer"),
    }
    composer = llm.pop("composer")
    with library_errors(), open_local(kb_dir, create=False) as kb:
        stored = kb.llm_setting()
        if composer == "extractive":
            stored = kb.set_llm(None)
        elif composer == "llm" or any(value is not None for value in chosen.values()):
            merged = {**stored, **{k: v for k, v in chosen.items() if v is not None}}
            make_composer(LLMOptions(composer="llm"), merged, environ={})  # checked before it is stored
            stored = kb.set_llm(merged)
    if as_json:
        print_json(stored)
    elif stored:
        click.echo("composer: llm · " + " · ".join(f"{k} {v}" for k, v in sorted(stored.items())))
    else:
        click.echo("composer: extractive (no language model stored)")
