"""DenseIndex: governed exact search, tie-breaks, mismatch errors, save/load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from veracity.index.dense import ALL, DenseHit, DenseIndex, Embedder, check_vectors
from veracity.index.embedders import FakeEmbedder
from veracity.model.errors import ConfigError, EmbedderMismatchError, SearchIndexError, ValidationError

MODEL = "test-model@1"


def _unit(*values: float) -> list[float]:
    vector = np.array(values, dtype=np.float64)
    return list(vector / np.linalg.norm(vector))


@pytest.fixture
def index() -> DenseIndex:
    ids = ["d", "a", "c", "b", "e"]
    vectors = [
        _unit(1, 0, 0),  # d
        _unit(1, 1, 0),  # a
        _unit(0, 1, 0),  # c
        _unit(1, 0, 0),  # b (ties with d)
        _unit(0, 0, 1),  # e
    ]
    return DenseIndex.build(ids, vectors, MODEL)


def test_build_sorts_ids_and_keeps_vectors_with_them(index: DenseIndex) -> None:
    assert index.ids == ("a", "b", "c", "d", "e")
    np.testing.assert_allclose(index.vector("c"), _unit(0, 1, 0), atol=1e-6)
    assert len(index) == 5 and "a" in index and "z" not in index
    assert index.dim == 3 and index.model_id == MODEL


def test_search_all_ranks_by_cosine_ties_by_id(index: DenseIndex) -> None:
    hits = index.search([1, 0, 0], k=3, allowed=ALL)
    assert [hit.id for hit in hits] == ["b", "d", "a"]
    assert hits[0].score == pytest.approx(1.0, abs=1e-6)
    assert hits[2].score == pytest.approx(np.sqrt(0.5), abs=1e-6)
    assert isinstance(hits[0], DenseHit)


def test_ties_at_the_cut_break_by_id() -> None:
    ids = [f"id{n:02d}" for n in range(30)]
    vectors = np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (30, 1))
    tied = DenseIndex.build(list(reversed(ids)), vectors, MODEL)
    assert [hit.id for hit in tied.search([1, 0], k=4, allowed=ALL)] == ids[:4]
    assert [hit.id for hit in tied.search([1, 0], k=2, allowed=set(ids[10:]))] == ids[10:12]


def test_search_scores_only_allowed_ids(index: DenseIndex) -> None:
    hits = index.search([1, 0, 0], k=5, allowed={"c", "e", "unknown"})
    assert {hit.id for hit in hits} == {"c", "e"}
    assert [hit.id for hit in hits] == ["c", "e"]  # both score 0: tie by id


class _MatmulSpy(np.ndarray):
    """An ndarray that records the shape of every matrix it is multiplied as."""

    shapes: ClassVar[list[tuple[int, ...]]] = []

    def __matmul__(self, other: object) -> np.ndarray:
        _MatmulSpy.shapes.append(self.shape)
        return np.asarray(self) @ np.asarray(other)


def test_search_computes_dot_products_only_for_allowed_rows(index: DenseIndex) -> None:
    matrix = np.stack([index.vector(i) for i in index.ids]).view(_MatmulSpy)
    spied = DenseIndex(index.ids, matrix, MODEL)
    _MatmulSpy.shapes.clear()
    hits = spied.search([1, 0, 0], k=2, allowed=["b", "c"])
    assert [hit.id for hit in hits] == ["b", "c"]
    assert _MatmulSpy.shapes == [(2, 3)]


def test_empty_allowed_returns_nothing(index: DenseIndex) -> None:
    assert index.search([1, 0, 0], k=3, allowed=set()) == []
    assert index.search([1, 0, 0], k=3, allowed=["zzz"]) == []


@pytest.mark.parametrize("allowed", [None, "a", 3, object()])
def test_fails_closed_without_all(index: DenseIndex, allowed: object) -> None:
    with pytest.raises(ConfigError, match="ALL"):
        index.search([1, 0, 0], k=3, allowed=allowed)  # type: ignore[arg-type]


def test_allowed_is_required(index: DenseIndex) -> None:
    with pytest.raises(TypeError):
        index.search([1, 0, 0], k=3)  # type: ignore[call-arg]


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_bad_k(index: DenseIndex, k: object) -> None:
    with pytest.raises(ConfigError):
        index.search([1, 0, 0], k=k, allowed=ALL)  # type: ignore[arg-type]


def test_k_larger_than_candidates(index: DenseIndex) -> None:
    assert len(index.search([0, 0, 1], k=100, allowed=ALL)) == 5


def test_query_dimension_mismatch(index: DenseIndex) -> None:
    with pytest.raises(EmbedderMismatchError):
        index.search([1, 0], k=1, allowed=ALL)
    with pytest.raises(EmbedderMismatchError):
        index.search([[1, 0, 0]], k=1, allowed=ALL)


def test_model_id_mismatch(index: DenseIndex) -> None:
    with pytest.raises(EmbedderMismatchError, match="other@1"):
        index.search([1, 0, 0], k=1, allowed=ALL, model_id="other@1")
    assert index.search([1, 0, 0], k=1, allowed=ALL, model_id=MODEL)


def test_search_text_checks_the_embedder() -> None:
    fake = FakeEmbedder()
    texts = {"c1": "登录 方式 变化", "c2": "安装 客户端", "c3": "登录 入口"}
    built = DenseIndex.build(list(texts), fake.embed_batch(list(texts.values())), fake.model_id)
    hits = built.search_text("登录 方式", embedder=fake, k=2, allowed=ALL)
    assert hits[0].id == "c1"
    with pytest.raises(EmbedderMismatchError):
        built.search_text("登录", embedder=FakeEmbedder(dim=64), k=1, allowed=ALL)
    other = FakeEmbedder()
    other.model_id = "fake-other@1"
    with pytest.raises(EmbedderMismatchError, match="fake-other@1"):
        built.search_text("登录", embedder=other, k=1, allowed=ALL)


def test_check_vectors() -> None:
    fake: Embedder = FakeEmbedder(dim=8)
    check_vectors(np.zeros((2, 8), dtype=np.float32), fake)
    check_vectors(np.zeros((0, 8), dtype=np.float32), fake)
    for bad in (np.zeros((2, 7)), np.zeros(8)):
        with pytest.raises(EmbedderMismatchError):
            check_vectors(bad, fake)


def test_build_normalizes_and_validates() -> None:
    built = DenseIndex.build(["x"], [[3.0, 4.0]], MODEL)
    np.testing.assert_allclose(built.vector("x"), [0.6, 0.8], atol=1e-6)
    with pytest.raises(ValidationError, match="duplicate"):
        DenseIndex.build(["x", "x"], [[1, 0], [0, 1]], MODEL)
    with pytest.raises(ValidationError, match="2 ids but 1"):
        DenseIndex.build(["x", "y"], [[1, 0]], MODEL)
    with pytest.raises(ValidationError, match="zero"):
        DenseIndex.build(["x"], [[0, 0]], MODEL)
    with pytest.raises(ValidationError, match="NaN"):
        DenseIndex.build(["x"], [[np.nan, 1]], MODEL)
    with pytest.raises(ValidationError):
        DenseIndex.build(["x"], [[1, 0]], "")


def test_save_load_round_trip(index: DenseIndex, tmp_path: Path) -> None:
    manifest_path = index.save(tmp_path / "dense")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    assert manifest["model_id"] == MODEL
    assert manifest["dim"] == 3 and manifest["count"] == 5
    assert manifest["normalization"] == "l2"
    loaded = DenseIndex.load(tmp_path / "dense")
    assert loaded.ids == index.ids and loaded.model_id == MODEL
    for query in ([1, 0, 0], [0.2, 0.3, 0.9]):
        assert loaded.search(query, k=5, allowed=ALL) == index.search(query, k=5, allowed=ALL)
    vectors = np.load(tmp_path / "dense" / "dense_vectors.npy", allow_pickle=False)
    assert vectors.dtype == np.float32


def test_load_checks_embedder(tmp_path: Path) -> None:
    fake = FakeEmbedder()
    built = DenseIndex.build(["a"], fake.embed_batch(["登录"]), fake.model_id)
    built.save(tmp_path)
    assert DenseIndex.load(tmp_path, embedder=fake).ids == ("a",)
    with pytest.raises(EmbedderMismatchError):
        DenseIndex.load(tmp_path, embedder=FakeEmbedder(dim=64))


def test_load_detects_tampering_and_missing_files(index: DenseIndex, tmp_path: Path) -> None:
    index.save(tmp_path)
    ids_path = tmp_path / "dense_ids.json"
    ids_path.write_text(json.dumps(["a", "b", "c", "d", "z"]), encoding="utf-8")
    with pytest.raises(SearchIndexError, match="manifest"):
        DenseIndex.load(tmp_path)
    with pytest.raises(SearchIndexError, match="cannot read"):
        DenseIndex.load(tmp_path / "missing")


def test_empty_index_round_trip(tmp_path: Path) -> None:
    empty = DenseIndex.build([], np.zeros((0, 4), dtype=np.float32), MODEL)
    assert empty.search([1, 0, 0, 0], k=3, allowed=ALL) == []
    empty.save(tmp_path)
    assert len(DenseIndex.load(tmp_path)) == 0
