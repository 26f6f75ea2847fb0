"""What an operator does to its own tenant through a service: upload, withdraw, retire, delete, status.

Every action is scoped to the operator key's tenant: a document of another
tenant is not found, uploads are ingested for that tenant (a file whose
metadata names another tenant is rejected, as ``veracity ingest --tenant``
rejects it), and the status names only that tenant's documents. The work is
done by the same functions the CLI calls (:meth:`LocalKnowledgeBase.ingest`,
:mod:`veracity.kb.lifecycle`, :mod:`veracity.kb.reindex`).

Uploaded files are kept under ``DIR/uploads/<tenant>/`` (their metadata, when
given, in a ``NAME.meta.yaml`` sidecar next to them), so each one stays a
source with a path, and uploading a changed file with the same name makes
the next revision of the same document.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import yaml

from ...catalog.sources import source_paths
from ...ingest.run import IngestReport, undefined_roles_json
from ...kb.backends import UPLOADS, uploads_folder
from ...kb.browse import find_document
from ...kb.lifecycle import change_status, delete, status_report
from ...kb.local import LocalKnowledgeBase
from ...model.contracts import Status
from ...model.errors import ValidationError
from .visible import shown_path

__all__ = ["ACTIONS", "UPLOADS", "change_document", "tenant_status", "upload_files"]

ACTIONS: Final = ("withdraw", "retire", "delete")
_RESERVED = re.compile(r"^(tenant\.ya?ml|.*\.meta\.ya?ml)$", re.IGNORECASE)


def _folder(kb: LocalKnowledgeBase, tenant: str) -> Path:
    if kb.path is None:
        raise ValidationError("this knowledge base lives in memory; uploads need a directory")
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", tenant).strip(".") or "tenant"
    return uploads_folder(kb.path) / slug


def _file_name(name: str) -> str:
    """The uploaded name without folders; refuses names that are no document or would govern others."""
    plain = Path(name.replace("\\", "/")).name.strip()
    if not plain or plain.startswith(".") or plain in {".", ".."}:
        raise ValidationError(f"cannot store an upload named {name!r}; give a plain file name", field="file")
    if _RESERVED.match(plain):
        raise ValidationError(
            f"{plain!r} would set roles or metadata for other files; upload documents only "
            "(send metadata in the 'metadata' field)",
            field="file",
        )
    return plain


def _metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping) or not all(isinstance(k, str) for k in metadata):
        raise ValidationError("metadata must be an object of field names to values", field="metadata")
    return dict(metadata)


def upload_files(
    kb: LocalKnowledgeBase,
    tenant: str,
    files: Sequence[tuple[str, bytes]],
    metadata: Mapping[str, Any] | None = None,
    *,
    strict: bool = False,
) -> dict[str, Any]:
    """Store ``files`` (name, bytes) for ``tenant`` and ingest them; the report names files, not paths."""
    if not files:
        raise ValidationError("no file uploaded; send one or more 'files' parts", field="files")
    fields = _metadata(metadata)
    folder = _folder(kb, tenant)
    names = [_file_name(name) for name, _ in files]
    if len(set(names)) != len(names):
        raise ValidationError(f"two uploads share a name: {sorted(names)}", field="files")
    folder.mkdir(parents=True, exist_ok=True)
    _refuse_taking_a_file(kb, tenant, folder, names, fields)
    paths: list[Path] = []
    for name, (_, content) in zip(names, files, strict=True):
        path = folder / name
        path.write_bytes(content)
        sidecar = folder / f"{path.stem}.meta.yaml"
        if fields:
            sidecar.write_text(yaml.safe_dump(fields, allow_unicode=True, sort_keys=True), encoding="utf-8")
        elif sidecar.exists():
            sidecar.unlink()  # metadata of an earlier upload of the same name must not stick
        paths.append(path)
    report = kb.ingest(paths, tenant=tenant, strict=strict)
    return upload_report(report, folder)


def _refuse_taking_a_file(
    kb: LocalKnowledgeBase, tenant: str, folder: Path, names: Sequence[str], fields: Mapping[str, Any] | None
) -> None:
    """``ValidationError`` when an upload that names its own ``id`` would replace the stored file of
    another document of the tenant: that document's citations and page images are read from the file."""
    declared = str((fields or {}).get("id") or "").strip()
    if not declared:
        return  # the file name gives the id: the same name is the same document's next revision
    store = kb.engine.catalog.store
    connection = getattr(store, "connection", None)
    if connection is None:
        return
    owners: dict[str, set[str]] = {}  # a file's path → the documents stored from it
    for (_, source_id), path in source_paths(connection, tenant).items():
        owners.setdefault(str(Path(path).resolve()), set()).add(source_id)
    for name in names:
        taken = sorted(owners.get(str((folder / name).resolve()), set()) - {declared})
        if taken:
            raise ValidationError(
                f"{name} is the stored file of document {taken[0]!r}; upload this one under another file "
                f"name (or with id {taken[0]!r} to revise that document)",
                field="files",
            )


def upload_report(report: IngestReport, folder: Path | None = None) -> dict[str, Any]:
    """An ingest report as an uploader sees it: source ids and file names, never server paths
    (``folder``: where the uploads were stored)."""
    return {
        "added": list(report.added),
        "revised": list(report.revised),
        "unchanged": list(report.unchanged),
        "restored": list(report.restored),
        "skipped": [{"file": shown_path(s), "reason": r} for s, r in report.skipped],
        "rejected": [{"file": shown_path(s), "reason": _unpathed(r, folder)} for s, r in report.rejected],
        "chunks": report.chunks_added,
        "embedded": report.index.embedded_chunks,
        "defaults_taken": dict(report.defaults_taken),
        # a document nobody can use, or one a command withdrew that stays so: the uploader should know
        "undefined_roles": undefined_roles_json(report.undefined_roles),
        "kept_withdrawn": list(report.kept_withdrawn),
    }


def _unpathed(reason: str, folder: Path | None = None) -> str:
    """A rejection reason with server paths cut to their file names: the uploads ``folder`` as
    given (a knowledge base opened by a relative path names its files relatively) and resolved,
    then any other absolute path."""
    if folder is not None:
        for prefix in {str(folder), str(folder.resolve())}:
            reason = reason.replace(prefix + os.sep, "")
    return re.sub(r"(/[^\s'\"]+)+/([^/\s'\"]+)", r"\2", reason)


def change_document(kb: LocalKnowledgeBase, tenant: str, id_or_source_id: str, action: str) -> dict[str, Any]:
    """Withdraw, retire or delete a document of ``tenant`` (``NotFoundError`` for any other)."""
    if action not in ACTIONS:
        raise ValidationError(f"unknown action {action!r}; valid: {', '.join(ACTIONS)}", field="action")
    assert kb.path is not None
    document = find_document(kb.engine.catalog, id_or_source_id, tenant)
    if action == "delete":
        change = delete(kb.engine, kb.path, document.document_id)
    else:
        status = Status.WITHDRAWN if action == "withdraw" else Status.RETIRED
        change = change_status(kb.engine, kb.path, document.document_id, status)
    return {
        "action": change.action,
        "id": change.source_id,
        "document_id": change.document_id,
        "catalog_revision": change.catalog_revision,
        "chunks_removed": change.chunks_removed,
        "changed": change.changed,
    }


def tenant_status(kb: LocalKnowledgeBase, tenant: str) -> dict[str, Any]:
    """``veracity status`` cut to one tenant: its documents by status, the index, versions, the model.

    Ingestion and quarantine rows are left out: they name files of every tenant.
    """
    assert kb.path is not None
    report = status_report(kb.engine, kb.path)
    return {
        "tenant": tenant,
        "documents": report["documents"].get(tenant, {}),
        "index": report["index"],
        "versions": report["versions"],
        "embedding": report["manifest"]["embedding"],
    }
