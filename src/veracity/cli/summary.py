"""What ``veracity ingest`` prints after an ingest: counts, defaults taken, what was skipped (or JSON).

Names from the folder (paths, ids, tenants, roles) are printed through
:func:`veracity.text.display.printable`, so a file name cannot forge a line
or reorder what is shown.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from ..text.display import printable

__all__ = ["ingest_json", "ingest_summary"]

LISTED: Final = 8
"""Skipped files named one by one before the rest is counted."""

_DEFAULT_LABELS: Final = {
    "status": "status active",
    "visibility": "visibility public",
    "trust": "trust official",
    "valid_from": "valid_from = file modification time",
    "revision": "revision numbered",
}


def _defaults_line(report: Any) -> str | None:
    if not report.documents_with_defaults:
        return None
    total = report.documents_with_defaults
    order = ("status", "visibility", "trust", "valid_from", "tenant", "revision")
    taken = dict(report.defaults_taken)
    parts = []
    for name in order:
        if name not in taken:
            continue
        label = _DEFAULT_LABELS.get(name) or f"tenant {report.default_tenant}"
        parts.append(label if taken[name] == total else f"{label} ({taken[name]})")
    noun = "document" if total == 1 else "documents"
    return f"  {total} {noun} took default governance: {', '.join(parts)} (--strict rejects them instead)"


def _names(names: Any) -> str:
    return ", ".join(printable(name) for name in names)


def _skipped_lines(report: Any) -> list[str]:
    from ..parse.parsers import IMAGE_SUFFIXES  # loaded already by the ingest that made the report

    lines = []
    scan = report.scan
    for folder in scan.empty:
        lines.append(f"  {printable(folder)}: the folder is empty, nothing to ingest")
    if scan.skipped:
        kinds = ", ".join(f"{count} {printable(suffix)}" for suffix, count in scan.skipped_by_suffix)
        lines.append(f"  skipped {scan.skipped} files of types no parser reads: {kinds}")
        images = sum(count for suffix, count in scan.skipped_by_suffix if suffix in IMAGE_SUFFIXES)
        if images:
            lines.append(f"  ({images} of them images: --images reads them by OCR)")
    if scan.hidden:
        more = len(scan.hidden) - LISTED
        shown = _names(scan.hidden[:LISTED]) + (f", … {more} more" if more > 0 else "")
        lines.append(f"  not read (hidden or dependency folders): {shown}")
    for link, reason in scan.links[:LISTED]:
        lines.append(f"  not followed {printable(link)}: {printable(reason)}")
    if len(scan.links) > LISTED:
        lines.append(f"  … and {len(scan.links) - LISTED} more symbolic links not followed")
    for source, reason in report.skipped[:LISTED]:
        lines.append(f"  skipped {printable(source)}: {printable(reason)}")
    if len(report.skipped) > LISTED:
        lines.append(f"  … and {len(report.skipped) - LISTED} more skipped")
    return lines


def ingest_summary(report: Any, kb_dir: Path) -> list[str]:
    """What ``report`` (an :class:`~veracity.ingest.run.IngestReport`) says, one finding per line."""
    index = report.index
    reused = f" (reused {index.reused_chunks})" if index.reused_chunks else ""
    lines = [
        f"{printable(kb_dir)}: added {len(report.added)} · revised {len(report.revised)} · "
        f"unchanged {len(report.unchanged)} · skipped {len(report.skipped)} · "
        f"rejected {len(report.rejected)} · chunks {report.chunks_added} · "
        f"embedded {index.embedded_chunks}{reused}"
    ]
    defaults = _defaults_line(report)
    if defaults:
        lines.append(defaults)
    if report.extra_keys:
        lines.append(f"  metadata keys kept (they govern nothing): {_names(report.extra_keys)}")
    if report.unmatched_metadata_keys:
        lines.append(
            "  metadata file keys that match no file (they govern nothing; a folder needs 'dir/**'): "
            f"{_names(report.unmatched_metadata_keys)}"
        )
    lines.extend(_skipped_lines(report))
    if report.restored:
        lines.append(f"  restored {len(report.restored)}: {_names(report.restored[:LISTED])}")
    if report.undefined_roles:
        named = [f"{name} ({', '.join(roles)})" for name, roles in report.undefined_roles[:LISTED]]
        lines.append(
            f"  allowed roles the tenant does not define, so nobody can use these "
            f"{len(report.undefined_roles)} until --roles defines them: {_names(named)}"
        )
    if report.not_served:
        held = [f"{name} ({status})" for name, status in report.not_served[:LISTED]]
        lines.append(
            f"  unchanged but not served {len(report.not_served)}: {_names(held)} "
            "(--restore brings back what withdraw or --prune withdrew)"
        )
    if report.gone_but_served:
        lines.append(
            f"  gone from the folder, still served {len(report.gone_but_served)}: "
            f"{_names(report.gone_but_served[:LISTED])} (--prune withdraws what left the folder)"
        )
    if report.kept_withdrawn:
        lines.append(
            f"  changed since withdrawn, stored withdrawn (not served) {len(report.kept_withdrawn)}: "
            f"{_names(report.kept_withdrawn[:LISTED])} (a command withdrew the revision before; "
            "ingest --restore serves the new one)"
        )
    if report.after_withdrawal:
        lines.append(
            f"  changed since withdrawn, now served as a new revision {len(report.after_withdrawal)}: "
            f"{_names(report.after_withdrawal[:LISTED])} (withdraw again to keep one out)"
        )
    pruned = report.pruned
    if pruned.withdrawn:
        lines.append(f"  pruned (file gone), withdrew {len(pruned.withdrawn)}: {_names(pruned.withdrawn)}")
    if pruned.deleted:
        lines.append(f"  pruned (file gone), deleted {len(pruned.deleted)}: {_names(pruned.deleted)}")
    if report.oversize_chunks:
        from ..parse.chunking import CHUNK_SIZE

        lines.append(
            f"  {report.oversize_chunks} chunks are over twice the {CHUNK_SIZE}-character budget "
            "(each one table row or code line that cannot be cut)"
        )
    defaulted = set(report.default_roles)
    for tenant, roles in report.roles_defined:
        lines.append(f"  tenant {printable(tenant)}: roles {_names(roles)}")
    for tenant in sorted(defaulted):
        lines.append(f"  tenant {printable(tenant)}: roles public (it defined none; add more with --roles)")
    if report.chunks_added:
        lines.append(
            f"  {report.chunks_per_second_without_embedding:,.0f} chunks/s without embedding; "
            f"embedding {report.seconds.get('embed', 0.0):.1f} s"
        )
    return lines


def ingest_json(report: Any, kb_dir: Path) -> dict[str, Any]:
    """``report`` as plain data (``ingest --json``)."""
    from ..ingest.run import undefined_roles_json  # here: the command line loads ingest only to ingest

    scan, index = report.scan, report.index
    return {
        "knowledge_base": str(kb_dir),
        "added": list(report.added),
        "revised": list(report.revised),
        "unchanged": list(report.unchanged),
        "restored": list(report.restored),
        "skipped": [{"source": source, "reason": reason} for source, reason in report.skipped],
        "rejected": [{"source": source, "reason": reason} for source, reason in report.rejected],
        "skipped_by_suffix": dict(scan.skipped_by_suffix),
        "not_read": list(scan.hidden),
        "links_not_followed": [{"path": path, "reason": reason} for path, reason in scan.links],
        "empty_folders": list(scan.empty),
        "chunks": report.chunks_added,
        "embedded": index.embedded_chunks,
        "reused": index.reused_chunks,
        "oversize_chunks": report.oversize_chunks,
        "default_tenant": report.default_tenant,
        "documents_with_defaults": report.documents_with_defaults,
        "defaults_taken": dict(report.defaults_taken),
        "metadata_keys": list(report.extra_keys),
        "unmatched_metadata_keys": list(report.unmatched_metadata_keys),
        "not_served": [{"id": name, "status": status} for name, status in report.not_served],
        "undefined_roles": undefined_roles_json(report.undefined_roles),
        "after_withdrawal": list(report.after_withdrawal),
        "kept_withdrawn": list(report.kept_withdrawn),
        "gone_but_served": list(report.gone_but_served),
        "roles_defined": {tenant: list(roles) for tenant, roles in report.roles_defined},
        "default_roles": list(report.default_roles),
        "pruned": {"withdrawn": list(report.pruned.withdrawn), "deleted": list(report.pruned.deleted)},
        "seconds": {stage: round(value, 3) for stage, value in sorted(report.seconds.items())},
    }
