"""The approximate dense index: filtered search, artefacts beside the catalog, fallback, verification."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.index.backend_contract import BackendContract, Items, corpus, ids_of
from veracity.catalog.catalog import Catalog
from veracity.catalog.sqlite import SQLiteStore
from veracity.index.ann import ann_search, build_ann, keys_digest, selection_bitmap
from veracity.index.embedders import FakeEmbedder
from veracity.index.snapshot import index_text
from veracity.index.sqlite import search as search_module
from veracity.index.sqlite.artefacts import ann_folder, load_artefact, manifest_path
from veracity.index.sqlite.search import SQLiteSearchIndex
from veracity.index.sqlite.verify import verify_version
from veracity.index.sqlite.versions import list_versions
from veracity.index.versioned import index_for
from veracity.kb.directory import init_demo_kb, open_kb
from veracity.kb.reindex import rebuild

faiss = pytest.importorskip("faiss", reason="pip install 'veracity[ann]'")

_names = itertools.count()


def file_index(folder: Path, items: Items, embedder, *, min_rows: int = 1) -> SQLiteSearchIndex:
    """A SQLite index in a file under ``folder`` whose partitions get artefacts from ``min_rows`` rows."""
    catalog = Catalog(SQLiteStore(folder / f"kb{next(_names)}.sqlite"))
    for document, chunks in items:
        catalog.add(document, chunks)
    index = SQLiteSearchIndex(catalog.store)  # type: ignore[arg-type]
    index.ann_min_rows, index.ann_oversample, index.ann_nprobe = min_rows, 1, 1
    index.sync(catalog, embedder)
    return index


class TestSQLiteAnnContract(BackendContract):
    """Dense search by the approximate index (1 cell probed first, then widened), rescored exactly."""

    @pytest.fixture(autouse=True)
    def _folder(self, tmp_path: Path) -> None:
        self.folder = tmp_path

    def make_backend(self, items, embedder):
        return file_index(self.folder, items, embedder)


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder(dim=64)


def unit_rows(rows: int, dim: int = 32, seed: int = 3) -> np.ndarray:
    matrix = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


@pytest.mark.parametrize("eligible", [1, 3, 37, 400])
def test_filtered_search_returns_exactly_min_k_eligible_rows(eligible: int) -> None:
    matrix = unit_rows(4000)
    keys = np.arange(10, 4010, dtype=np.int64) * 3  # sparse, not positions
    ann = build_ann(keys, matrix, nlist=64)
    chosen = np.sort(np.random.default_rng(eligible).choice(keys, size=eligible, replace=False))
    bitmap = selection_bitmap(chosen)
    for query in unit_rows(20, seed=9):
        found = ann_search(ann, query, 10, selected=bitmap, eligible=eligible, nprobe=1, scale=False)
        assert found.keys.size == min(10, eligible)
        assert set(found.keys.tolist()) <= set(chosen.tolist())
    assert eligible > 40 or found.widened > 0  # a scattered few are found by widening, not by luck


def test_selection_bitmap_sets_one_bit_per_key() -> None:
    keys = np.array([0, 7, 8, 63, 1000], dtype=np.int64)
    bits = np.unpackbits(selection_bitmap(keys), bitorder="little")
    assert np.flatnonzero(bits).tolist() == keys.tolist()
    assert keys_digest(keys[::-1].copy()) == keys_digest(keys)


def test_ann_plan_is_used_and_rescored_exactly(tmp_path, embedder) -> None:
    items = corpus(extra_b=40)
    index = file_index(tmp_path, items, embedder)
    eligible = ids_of(items, "beta") - ids_of(items, "beta", "beta-3", "beta-4")
    vector = embedder.embed_batch(["SAML 日志 证书"], kind="query")[0]

    def search():
        return index.dense_search(
            "beta", vector, k=5, eligible_document_ids=eligible, model_id=embedder.model_id
        )

    found = search()
    assert index.last_dense_plan == "resident-ann" and len(found) == 5
    allowed = {c for d in eligible for c in index.chunks_by_document[d]}
    assert {cid for cid, _ in found} <= allowed
    index.ann_min_rows = None
    exact = search()
    assert index.last_dense_plan == "resident-exact"
    assert found == exact  # small data: every cell probed after widening, so the same top 5


def test_artefacts_sit_beside_the_catalog_with_a_manifest(tmp_path, embedder) -> None:
    index = file_index(tmp_path, corpus(extra_b=3), embedder)
    folder = ann_folder(index.store)
    assert folder == Path(index.store.path + "-ann") and folder.is_dir()
    model = index.vector_model()
    manifest = json.loads(manifest_path(folder, model, "beta").read_text(encoding="utf-8"))
    assert manifest["format"] == "faiss-ivf-sq8" and manifest["format_version"] == 1
    assert manifest["index_version"] == index.version and manifest["model_id"] == embedder.model_id
    assert manifest["tenant"] == "beta" and manifest["dim"] == 64
    beta = [
        c for d, cs in index.chunks_by_document.items() if index.documents[d].tenant == "beta" for c in cs
    ]
    assert manifest["rows"] == len(beta)
    assert {"nlist", "train_rows", "seed"} <= set(manifest["params"])
    assert not load_artefact(folder, index.version, model, "beta").problem


def test_a_damaged_artefact_falls_back_and_verification_reports_it(tmp_path, embedder) -> None:
    items = corpus(extra_b=40)
    index = file_index(tmp_path, items, embedder)
    folder, model = ann_folder(index.store), index.vector_model()
    manifest = json.loads(manifest_path(folder, model, "beta").read_text(encoding="utf-8"))
    with (folder / manifest["index_file"]).open("r+b") as handle:
        handle.seek(200)
        handle.write(b"\x00garbage\x00")
    fresh = SQLiteSearchIndex(index.store)
    fresh.ann_min_rows, fresh.ann_oversample = 1, 1
    vector = embedder.embed_batch(["SAML"], kind="query")[0]
    eligible = ids_of(items, "beta")
    found = fresh.dense_search(
        "beta", vector, k=5, eligible_document_ids=eligible, model_id=embedder.model_id
    )
    assert fresh.last_dense_plan == "resident-exact" and len(found) == 5
    check = next(c for c in verify_version(fresh, Catalog(index.store), embedder).checks if c.name == "ann")
    assert not check.passed and "sha256" in check.detail


def test_a_stale_artefact_is_not_used(tmp_path, embedder) -> None:
    items = corpus(extra_b=40)
    index = file_index(tmp_path, items, embedder)
    folder, model = ann_folder(index.store), index.vector_model()
    path = manifest_path(folder, model, "beta")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(
        json.dumps({**manifest, "index_version": manifest["index_version"] + 1}), encoding="utf-8"
    )
    fresh = SQLiteSearchIndex(index.store)
    fresh.ann_min_rows, fresh.ann_oversample = 1, 1
    vector = embedder.embed_batch(["SAML"], kind="query")[0]
    fresh.dense_search(
        "beta", vector, k=5, eligible_document_ids=ids_of(items, "beta"), model_id=embedder.model_id
    )
    assert fresh.last_dense_plan == "resident-exact"


def test_rows_added_since_the_build_are_searched_exactly_until_sync_rebuilds(tmp_path, embedder) -> None:
    items = corpus(extra_b=40)
    index = file_index(tmp_path, items, embedder)
    catalog = Catalog(index.store)
    folder, model = ann_folder(index.store), index.vector_model()
    built = json.loads(manifest_path(folder, model, "beta").read_text(encoding="utf-8"))
    extra = corpus(extra_b=46)[-6:]
    for document, chunks in extra:
        catalog.add(document, chunks)
    index.add(extra, embedder)  # a plain add does not rebuild: 6 of 48 rows are not covered
    vector = embedder.embed_batch([index_text(extra[-1][1][0])], kind="passage")[0]
    eligible = ids_of([*items, *extra], "beta")
    found = index.dense_search(
        "beta", vector, k=3, eligible_document_ids=eligible, model_id=embedder.model_id
    )
    assert index.last_dense_plan == "resident-ann"
    assert found[0][0] == extra[-1][1][0].chunk_id  # an uncovered row still ranks first
    index.sync(catalog, embedder)  # 12.5 % uncovered > REBUILD_SHARE: rebuilt
    rebuilt = json.loads(manifest_path(folder, model, "beta").read_text(encoding="utf-8"))
    assert rebuilt["rows"] == built["rows"] + len(extra)
    assert not (folder / built["index_file"]).exists()  # the old files went


def test_without_faiss_everything_falls_back(tmp_path, embedder, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "faiss", None)  # import faiss raises ImportError
    items = corpus(extra_b=40)
    index = file_index(tmp_path, items, embedder)
    assert not ann_folder(index.store).exists()
    vector = embedder.embed_batch(["SAML"], kind="query")[0]
    found = index.dense_search(
        "beta", vector, k=5, eligible_document_ids=ids_of(items, "beta"), model_id=embedder.model_id
    )
    assert index.last_dense_plan == "resident-exact" and len(found) == 5


def test_reindex_rebuilds_checks_and_sweeps_artefacts(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(search_module, "ANN_MIN_ROWS", 1)
    location = tmp_path / "kb"
    init_demo_kb(location, FakeEmbedder()).catalog.store.close()
    kb = open_kb(location, FakeEmbedder())
    store = kb.catalog.store
    folder = ann_folder(store)
    for number in range(3):
        report = rebuild(kb, location, keep=1)
        names = [c.name for c in report.verification.checks]
        assert "ann" in names and report.verification.passed, names
        versions = {m["index_version"] for m in map(json.loads, map(Path.read_text, folder.glob("*.json")))}
        live = {v.version for v in list_versions(store.connection) if v.state in ("published", "retired")}
        assert versions == live and report.version in versions, number
    pinned = index_for(store, version=report.version)
    pinned.ann_min_rows = 1
    manifests = list(folder.glob("*.json"))
    for manifest in manifests:
        described = json.loads(manifest.read_text(encoding="utf-8"))
        (folder / described["index_file"]).write_bytes(b"not an index")
    failed = verify_version(pinned, kb.catalog, FakeEmbedder())
    assert not failed.passed and any(f.startswith("ann:") for f in failed.failures())
    assert rebuild(kb, location, keep=1).verification.passed  # a new version, new artefacts
