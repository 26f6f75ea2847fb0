"""Lifecycle commands on a knowledge-base directory: withdraw, retire, delete, status.

Registered on the ``veracity`` group by :mod:`veracity.cli.main`. Thin: parse, call
:mod:`veracity.kb.lifecycle`, print what changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..model.contracts import Status
from ..text.display import printable
from .common import CHECK_OPTION, KB_OPTION, NO_WAIT_OPTION, library_errors, open_knowledge_base

OWNER_OPTION = click.option(
    "--tenant",
    default=None,
    help="The tenant whose document it is (source ids are per tenant; needed when several hold it).",
)
REVISION_OPTION = click.option(
    "--expected-revision",
    type=int,
    default=None,
    help="Refuse the change unless the document's catalog revision is this (compare-and-set).",
)


def _status_command(name: str, status: Status, summary: str) -> click.Command:
    @click.command(name, help=summary)
    @click.argument("document_id")
    @KB_OPTION
    @OWNER_OPTION
    @REVISION_OPTION
    @NO_WAIT_OPTION
    def command(
        document_id: str, kb_dir: Path, tenant: str | None, expected_revision: int | None, no_wait: bool
    ) -> None:
        from ..kb.lifecycle import change_status

        with library_errors():
            kb = open_knowledge_base(kb_dir, no_wait=no_wait)
            change = change_status(
                kb, kb_dir, document_id, status, expected_revision=expected_revision, tenant=tenant
            )
        name = f"{printable(change.source_id)} (tenant {printable(change.tenant)})"
        already = "" if change.changed else "already "
        done = "" if change.changed else "; nothing changed"
        click.echo(f"{name}: {already}{change.action} (catalog revision {change.catalog_revision}{done})")

    return command


withdraw_command = _status_command(
    "withdraw",
    Status.WITHDRAWN,
    "Withdraw a document (wrong or unsafe): never returned again, nor a changed revision of its file"
    " (ingest --restore brings it back).",
)
retire_command = _status_command(
    "retire", Status.RETIRED, "Retire a document (replaced or obsolete): never returned again."
)


@click.command("delete")
@click.argument("document_id")
@KB_OPTION
@OWNER_OPTION
@NO_WAIT_OPTION
def delete_command(document_id: str, kb_dir: Path, tenant: str | None, no_wait: bool) -> None:
    """Delete a document with its chunks, postings and vectors, in one transaction."""
    from ..kb.lifecycle import delete

    with library_errors():
        change = delete(open_knowledge_base(kb_dir, no_wait=no_wait), kb_dir, document_id, tenant=tenant)
    name = f"{printable(change.source_id)} (tenant {printable(change.tenant)})"
    click.echo(f"{name}: deleted ({change.chunks_removed} chunks removed from the index)")


@click.command(
    "status",
    epilog="Operator view: no principal is checked; it names every document, file and quarantine "
    "row of the knowledge base. A multi-user service must never expose it; it gets its own "
    "principal-checked endpoints.",
)
@KB_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@CHECK_OPTION
def status_command(kb_dir: Path, as_json: bool, check: bool) -> None:
    """Documents per tenant and status, index counts and the manifest (operator view)."""
    from ..kb.status import folder_status

    with library_errors():
        report = folder_status(kb_dir, check=check)
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, sort_keys=True, indent=2))
        return
    if report.get("integrity_check"):
        click.echo(f"integrity check: {report['integrity_check']}")
    if report.get("writer"):
        click.echo(f"writing now: {report['writer']} (other writers wait for it; readers do not)")
    for tenant, counts in report["documents"].items():
        click.echo(f"{printable(tenant)}: " + ", ".join(f"{n} {state}" for state, n in counts.items()))
    if report["tombstones"]:
        click.echo(f"deleted sources remembered: {report['tombstones']} (ingest skips them; --restore)")
    index = report["index"]
    verified = {
        True: "verified",
        False: "verification FAILED",
        None: "built by ingest, not verified; 'veracity reindex' builds a verified version",
    }
    click.echo(
        f"index: version {index['version']} ({verified[index['verification_passed']]}, "
        f"published {index['last_publish'] or 'at creation'}), {index['documents']} documents, "
        f"{index['chunks']} chunks, generation {index['generation']}"
    )
    if index["documents"] != index["catalog_documents"]:
        # the catalog is the truth and the index is derived: a killed ingest leaves it behind
        why = "an ingest is writing" if report.get("writer") else "an ingest was interrupted"
        click.echo(
            f"index behind the catalog: it holds {index['documents']} of the catalog's "
            f"{index['catalog_documents']} documents ({why}); ingesting the same folder again "
            "or 'veracity reindex' catches it up"
        )
    kept = [f"{v['version']} {v['state']}" for v in report["versions"] if v["state"] not in ("dropped",)]
    click.echo("index versions: " + ", ".join(kept))
    if report["ingestion"]:
        states = ", ".join(f"{n} {state}" for state, n in report["ingestion"].items())
        click.echo(f"ingestion (latest state per file): {states}")
    for item in report["quarantine"]:
        click.echo(f"quarantined {printable(item['source'])}: {printable(item['reason'])}")
    for line in _source_lines(report.get("sources", [])):
        click.echo(line)
    for line in _parsing_lines(report["parsing"]):
        click.echo(line)
    embedding = report["manifest"]["embedding"] or {}
    click.echo(f"model: {embedding.get('model_id')} ({embedding.get('dim')} dims)")


def _source_lines(sources: list[dict[str, Any]]) -> list[str]:
    """One line per synced source: last sync, its documents per state, its error if the last run failed."""
    lines = []
    for source in sources:
        documents = ", ".join(f"{n} {state}" for state, n in source["documents"].items()) or "no documents"
        reached = f" @ {source['state']['commit'][:12]}" if source["state"].get("commit") else ""
        when = source["last_success"] or "never"
        line = f"source {printable(source['name'])} ({source['kind']}{reached}): last synced {when}"
        line += f"; {documents}"
        if source["schedule"]:
            line += f"; schedule {printable(source['schedule'])}"
        lines.append(line)
        if source["last_error"]:
            lines.append(f"  last sync at {source['last_attempt']} FAILED: {printable(source['last_error'])}")
    return lines


def _parsing_lines(parsing: dict[str, Any]) -> list[str]:
    """Totals over every file, then one line per file whose pages were OCR'd or gave no text."""
    from ..parse.diagnostics import ParseDiagnostics

    totals = parsing["totals"]
    if not totals["files"]:
        return []
    parts = [f"{totals['files']} files", f"{totals['characters']:,} chars"]
    if totals["pages_total"]:
        parts.append(f"{totals['pages_parsed']}/{totals['pages_total']} pages with text")
    for key, words in (("empty_pages", "empty pages"), ("ocr_pages", "pages OCR'd"),
                       ("pages_needing_ocr", "pages need OCR"), ("tables", "tables"),
                       ("header_footer_lines_removed", "header/footer lines removed"),
                       ("illegal_characters", "illegal chars")):  # fmt: skip
        if totals[key]:
            parts.append(f"{totals[key]} {words}")
    lines = ["parsing: " + ", ".join(parts)]
    for source, found in parsing["files"].items():
        diagnostics = ParseDiagnostics.from_dict(found)
        if diagnostics.empty_pages or diagnostics.ocr_pages or diagnostics.pages_needing_ocr:
            lines.append(f"  {printable(source)}: {diagnostics.summary()}")
    return lines


LIFECYCLE_COMMANDS = (withdraw_command, retire_command, delete_command, status_command)
