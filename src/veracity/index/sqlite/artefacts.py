"""Approximate-index artefacts on disk, next to the catalog file: write, load, check, refresh, sweep.

The folder is the database file's name plus ``-ann`` (``catalog.sqlite-ann/``,
as SQLite names its ``-wal`` and ``-shm`` companions). Per (index version,
model, tenant) it holds three files::

    vec<version>_<dim>_<model hash>-<tenant hash>.json          the manifest
    vec<version>_<dim>_<model hash>-<tenant hash>.<sha12>.faiss the faiss index
    vec<version>_<dim>_<model hash>-<tenant hash>.<sha12>.npy   its chunk keys, sorted (int64)

The manifest records the format and its version, the index version, model id,
dim, tenant, row count, the sha256 of the sorted keys (:func:`keys_digest`),
each file's sha256, and the build parameters. Data files are named by their
content and never rewritten; a rebuild writes new ones, then replaces the
manifest, then removes the old ones, so a reader sees one whole artefact or a
mismatch, never a mix. An artefact is derived: a missing or damaged one only
means "not usable" and searches use the exact or binary plans; ``reindex``
(through ``sync``) builds them again, and verification reports damaged ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import apsw
import numpy as np
import numpy.typing as npt

from ...catalog.sql import all_rows
from ...model.contracts import file_sha256
from ..ann import (
    ANN_FORMAT,
    ANN_FORMAT_VERSION,
    REBUILD_SHARE,
    AnnIndex,
    AnnParams,
    build_ann,
    faiss_module,
    keys_digest,
)
from .tables import IndexTables
from .vectors import load_partition
from .writer import VectorModel

__all__ = [
    "ANN_SUFFIX",
    "AnnManifest",
    "Loaded",
    "ann_folder",
    "check_version",
    "load_artefact",
    "manifest_path",
    "partition_keys",
    "refresh_artefacts",
    "sweep_artefacts",
    "write_artefact",
]

ANN_SUFFIX: Final = "-ann"


def ann_folder(store: Any) -> Path | None:
    """The artefact folder of a SQLite store's file; ``None`` in memory or on another engine."""
    if getattr(store.connection, "dialect", "sqlite") != "sqlite":
        return None
    path = str(getattr(store, "path", "") or "")
    if not path or path == ":memory:" or path.startswith("file:"):
        return None
    return Path(path + ANN_SUFFIX)


def _stem(model: VectorModel, tenant: str) -> str:
    return f"{model.table}-{hashlib.sha256(tenant.encode('utf-8')).hexdigest()[:16]}"


def manifest_path(folder: Path, model: VectorModel, tenant: str) -> Path:
    """Where the manifest of ``tenant``'s artefact for ``model`` (of one index version) lives."""
    return folder / f"{_stem(model, tenant)}.json"


@dataclass(frozen=True, slots=True)
class AnnManifest:
    """What an artefact says about itself (its JSON manifest)."""

    index_version: int
    model_id: str
    dim: int
    tenant: str
    rows: int
    keys_digest: str
    index_file: str
    index_sha256: str
    keys_file: str
    keys_sha256: str
    params: dict[str, Any]
    format: str = ANN_FORMAT
    format_version: int = ANN_FORMAT_VERSION

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {name: getattr(self, name) for name in self.__slots__}


def write_artefact(folder: Path, version: int, model: VectorModel, tenant: str, ann: AnnIndex) -> AnnManifest:
    """Write ``ann`` as ``tenant``'s artefact of ``version``; earlier files of the same artefact go."""
    faiss = faiss_module()
    assert faiss is not None
    folder.mkdir(parents=True, exist_ok=True)
    stem = _stem(model, tenant)
    staged_index, staged_keys = folder / f"{stem}.tmp.faiss", folder / f"{stem}.tmp.npy"
    faiss.write_index(ann.index, str(staged_index))
    np.save(staged_keys, ann.keys.astype("<i8"), allow_pickle=False)
    index_sha, keys_sha = file_sha256(staged_index), file_sha256(staged_keys)
    index_file, keys_file = f"{stem}.{index_sha[:12]}.faiss", f"{stem}.{keys_sha[:12]}.npy"
    os.replace(staged_index, folder / index_file)
    os.replace(staged_keys, folder / keys_file)
    manifest = AnnManifest(
        index_version=int(version), model_id=model.model_id, dim=int(model.dim), tenant=tenant,
        rows=ann.rows, keys_digest=keys_digest(ann.keys), index_file=index_file, index_sha256=index_sha,
        keys_file=keys_file, keys_sha256=keys_sha, params=ann.params.as_dict(),
    )  # fmt: skip
    staged = folder / f"{stem}.tmp.json"
    staged.write_text(json.dumps(manifest.as_dict(), indent=1, sort_keys=True), encoding="utf-8")
    os.replace(staged, manifest_path(folder, model, tenant))
    for old in folder.glob(f"{stem}.*"):
        if old.name not in (index_file, keys_file, f"{stem}.json"):
            old.unlink(missing_ok=True)
    return manifest


def _read_manifest(path: Path) -> AnnManifest:
    data = json.loads(path.read_text(encoding="utf-8"))
    return AnnManifest(**{name: data[name] for name in AnnManifest.__slots__})


@dataclass(frozen=True, slots=True)
class Loaded:
    """An artefact read back (``ann``), or why it cannot be used (``problem``)."""

    manifest: AnnManifest | None
    ann: AnnIndex | None
    problem: str


def _expect(manifest: AnnManifest, version: int, model: VectorModel, tenant: str) -> str:
    wanted = (ANN_FORMAT, ANN_FORMAT_VERSION, int(version), model.model_id, int(model.dim), tenant)
    found = (manifest.format, manifest.format_version, manifest.index_version, manifest.model_id,
             manifest.dim, manifest.tenant)  # fmt: skip
    return "" if found == wanted else f"manifest describes {found}, expected {wanted}"


def load_artefact(
    folder: Path, version: int, model: VectorModel, tenant: str, *, read_index: bool = True
) -> Loaded:
    """``tenant``'s artefact of ``version`` after every check (files' sha256, keys, rows, dim).

    ``read_index=False`` checks the manifest and keys only (and the index file's
    presence): what ``sync`` needs to decide whether to rebuild.
    """
    path = manifest_path(folder, model, tenant)
    if not path.exists():
        return Loaded(None, None, "missing")
    try:
        manifest = _read_manifest(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return Loaded(None, None, f"unreadable manifest {path.name}: {exc}")
    problem = _expect(manifest, version, model, tenant)
    if problem:
        return Loaded(manifest, None, problem)
    keys_path, index_path = folder / manifest.keys_file, folder / manifest.index_file
    try:
        if file_sha256(keys_path) != manifest.keys_sha256:
            return Loaded(manifest, None, f"{keys_path.name}: sha256 differs from the manifest")
        keys = np.load(keys_path, allow_pickle=False)
        if (
            keys.dtype != np.int64
            or keys.shape != (manifest.rows,)
            or keys_digest(keys) != manifest.keys_digest
        ):
            return Loaded(
                manifest, None, f"{keys_path.name}: keys differ from the manifest's digest or count"
            )
        if not read_index:
            ok = index_path.exists()
            return Loaded(manifest, None, "" if ok else f"{index_path.name} is missing")
        if file_sha256(index_path) != manifest.index_sha256:
            return Loaded(manifest, None, f"{index_path.name}: sha256 differs from the manifest")
        faiss = faiss_module()
        if faiss is None:
            return Loaded(manifest, None, "faiss is not installed")
        index = faiss.read_index(str(index_path))
    except (OSError, ValueError, RuntimeError) as exc:
        return Loaded(manifest, None, f"unreadable artefact: {exc}")
    if int(index.ntotal) != manifest.rows or int(index.d) != model.dim:
        return Loaded(
            manifest, None, f"index holds {index.ntotal} rows of dim {index.d}, manifest {manifest.rows}"
        )
    params = AnnParams(**manifest.params)
    return Loaded(manifest, AnnIndex(index=index, keys=np.ascontiguousarray(keys), params=params), "")


def partition_keys(connection: apsw.Connection, tables: IndexTables, tenant: str) -> npt.NDArray[np.int64]:
    """The chunk keys of ``tenant`` in the version, ascending."""
    rows = all_rows(
        connection,
        f"SELECT c.chunk_key FROM {tables.chunks} AS c JOIN {tables.tenants} AS t USING (tenant_key) "
        "WHERE t.tenant = ? ORDER BY c.chunk_key",
        (tenant,),
    )
    return np.array([int(r[0]) for r in rows], dtype=np.int64)


def stale_share(covered: npt.NDArray[np.int64], live: npt.NDArray[np.int64]) -> float:
    """(live keys not covered + covered keys no longer live) / live keys."""
    both = np.intersect1d(covered, live, assume_unique=True).size
    return ((live.size - both) + (covered.size - both)) / max(1, live.size)


def _tenants(connection: apsw.Connection, tables: IndexTables) -> list[tuple[str, int]]:
    """Every tenant of the version with its chunk count (one grouped query: counts before keys)."""
    rows = all_rows(
        connection,
        f"SELECT t.tenant, count(c.chunk_key) FROM {tables.tenants} AS t "
        f"LEFT JOIN {tables.chunks} AS c USING (tenant_key) GROUP BY t.tenant ORDER BY t.tenant",
    )
    return [(str(tenant), int(count)) for tenant, count in rows]


def refresh_artefacts(
    connection: apsw.Connection, tables: IndexTables, model: VectorModel, folder: Path, min_rows: int
) -> list[str]:
    """Build the artefacts the version lacks; return the tenants built.

    A tenant with ``min_rows`` rows or more gets one when it has none, when
    its artefact is not usable, or when the rows it does not describe exceed
    :data:`REBUILD_SHARE`; a smaller tenant's artefact is removed.
    """
    built: list[str] = []
    for tenant, count in _tenants(connection, tables):
        path = manifest_path(folder, model, tenant)
        if count < min_rows:
            if path.exists():
                _remove(folder, path)
            continue
        live = partition_keys(connection, tables, tenant)
        found = load_artefact(folder, tables.version, model, tenant, read_index=False)
        if not found.problem and found.manifest is not None:
            covered = np.load(folder / found.manifest.keys_file, allow_pickle=False)
            if stale_share(covered, live) <= REBUILD_SHARE:
                continue
        loaded = load_partition(connection, model.table, tenant, model.dim)
        if loaded is None or loaded[0].size == 0:
            continue  # unknown vec0 layout: searches use the KNN, an artefact would not be read
        write_artefact(folder, tables.version, model, tenant, build_ann(*loaded))
        built.append(tenant)
    return built


def check_version(
    connection: apsw.Connection, tables: IndexTables, model: VectorModel, folder: Path, min_rows: int
) -> tuple[list[str], dict[str, int]]:
    """Problems with the version's artefacts (full checks, and against the index's keys), and counts."""
    problems: list[str] = []
    counts = {"artefacts": 0, "missing": 0, "rows": 0}
    for tenant, count in _tenants(connection, tables):
        if not manifest_path(folder, model, tenant).exists():
            counts["missing"] += count >= min_rows
            continue
        live = partition_keys(connection, tables, tenant)
        found = load_artefact(folder, tables.version, model, tenant)
        counts["artefacts"] += 1
        if found.problem or found.ann is None:
            problems.append(f"{tenant}: {found.problem}")
            continue
        counts["rows"] += found.ann.rows
        share = stale_share(found.ann.keys, live)
        if share > REBUILD_SHARE:
            problems.append(
                f"{tenant}: covers {found.ann.rows} rows, {share:.0%} differ from the index's {live.size}"
            )
    return problems, counts


def _remove(folder: Path, manifest: Path) -> None:
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        described = _read_manifest(manifest)
        (folder / described.index_file).unlink(missing_ok=True)
        (folder / described.keys_file).unlink(missing_ok=True)
    manifest.unlink(missing_ok=True)


def sweep_artefacts(folder: Path | None, live_versions: set[int]) -> int:
    """Remove artefacts of versions not in ``live_versions`` and files no manifest names.

    Returns how many files were removed.
    """
    if folder is None or not folder.is_dir():
        return 0
    named: set[str] = set()
    removed = 0
    for manifest in sorted(folder.glob("*.json")):
        try:
            described = _read_manifest(manifest)
        except (OSError, ValueError, KeyError, TypeError):
            described = None
        if described is not None and described.index_version in live_versions:
            named.update((manifest.name, described.index_file, described.keys_file))
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.name not in named:
            path.unlink(missing_ok=True)
            removed += 1
    return removed
