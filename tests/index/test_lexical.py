"""BM25Index: agreement with rank_bm25 and bm25s, allowed-set semantics, storage."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from veracity.index.lexical import ALL, BM25Index, BM25Variant, TermStatistics
from veracity.model.errors import ConfigError, SearchIndexError, ValidationError
from veracity.text.tokens import tokenize

ZH_DOCS = [
    "星舰控制台支持离线模式，断网后仍可查看最近的日志。",
    "配置项 config.max_retries 控制重试次数，默认值为 3。",
    "升级到 3.2 版本前，请先备份数据库并停止所有写入任务。",
    "错误码 E1042 表示证书已过期，需要重新签发证书。",
    "离线模式下无法同步配置，恢复网络后会自动同步。",
    "使用 --to 参数指定迁移的目标版本，例如 --to 3.2。",
    "日志默认保留 30 天，可以在控制台修改保留时间。",
    "证书签发由安全团队负责，申请流程见内部文档。",
    "数据库备份建议每天执行一次，并保留最近七天的备份。",
    "重试次数过多会导致任务积压，请合理设置 max_retries。",
]
ZH_QUERIES = [
    "离线模式能看日志吗",
    "证书过期 E1042 怎么办",
    "升级 3.2 之前要备份数据库",
    "重试次数",
]


def random_corpus(seed: int, n_docs: int = 60, vocab: int = 25) -> list[tuple[str, list[str]]]:
    """Short non-empty documents over a skewed vocabulary (some idf values go negative).

    Non-empty because rank_bm25 scores an empty document NaN when b = 1.
    """
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    weights = [1.0 / (i + 1) for i in range(vocab)]
    return [(f"d{i:03d}", rng.choices(words, weights, k=rng.randint(1, 15))) for i in range(n_docs)]


def zh_corpus() -> list[tuple[str, list[str]]]:
    return [(f"zh{i:02d}", tokenize(text)) for i, text in enumerate(ZH_DOCS)]


def assert_matches_okapi(docs: list[tuple[str, list[str]]], queries: list[list[str]]) -> None:
    for k1, b in [(1.5, 0.75), (1.2, 0.0), (0.9, 1.0)]:
        index = BM25Index.build(docs, k1=k1, b=b, variant="okapi")
        reference = BM25Okapi([tokens for _, tokens in docs], k1=k1, b=b)
        for query in queries:
            ours = index.scores(query, allowed=ALL)
            expected = reference.get_scores(query)
            assert list(ours) == [doc_id for doc_id, _ in docs]
            np.testing.assert_allclose(list(ours.values()), expected, rtol=0, atol=1e-6)


def test_okapi_matches_rank_bm25_on_random_corpus() -> None:
    docs = random_corpus(1)
    rng = random.Random(2)
    words = [f"w{i}" for i in range(25)] + ["unknown"]
    queries = [rng.choices(words, k=rng.randint(1, 6)) for _ in range(40)]  # with repeats
    assert any(len(set(q)) < len(q) for q in queries)
    assert_matches_okapi(docs, queries)


def test_okapi_epsilon_floor_is_exercised() -> None:
    docs = random_corpus(1)
    assert sum("w0" in tokens for _, tokens in docs) > len(docs) / 2  # raw idf < 0
    reference = BM25Okapi([tokens for _, tokens in docs], k1=1.2)
    assert reference.idf["w0"] == pytest.approx(0.25 * reference.average_idf)
    index = BM25Index.build(docs, k1=1.2, variant="okapi")
    np.testing.assert_allclose(
        list(index.scores(["w0"], allowed=ALL).values()), reference.get_scores(["w0"]), atol=1e-9
    )


def test_okapi_matches_rank_bm25_on_chinese_corpus() -> None:
    queries = [tokenize(q) for q in ZH_QUERIES]
    assert all(queries)
    assert_matches_okapi(zh_corpus(), queries)


def test_lucene_hand_computed() -> None:
    docs = [("a", ["x", "y"]), ("b", ["x", "x", "z", "z"]), ("c", ["z"])]
    index = BM25Index.build(docs, k1=1.2, b=0.75)
    n, avgdl = 3, 7 / 3

    def contribution(tf: int, dl: int, df: int) -> float:
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        return idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl))

    scores = index.scores(["x", "z"], allowed=ALL)
    assert scores["a"] == pytest.approx(contribution(1, 2, 2), abs=1e-12)
    assert scores["b"] == pytest.approx(contribution(2, 4, 2) + contribution(2, 4, 2), abs=1e-12)
    assert scores["c"] == pytest.approx(contribution(1, 1, 2), abs=1e-12)
    # a repeated query term counts once per occurrence
    doubled = index.scores(["y", "y"], allowed=ALL)["a"]
    assert doubled == pytest.approx(2 * index.scores(["y"], allowed=ALL)["a"])


def test_lucene_matches_bm25s() -> None:
    bm25s = pytest.importorskip("bm25s")
    for docs in (random_corpus(3, n_docs=80, vocab=40), zh_corpus()):
        index = BM25Index.build(docs, k1=1.2, b=0.75, variant=BM25Variant.LUCENE)
        reference = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        reference.index([tokens for _, tokens in docs], show_progress=False)
        vocab = sorted({t for _, tokens in docs for t in tokens})
        rng = random.Random(4)
        for _ in range(25):
            query = rng.sample(vocab, k=min(len(vocab), rng.randint(1, 5)))
            expected = reference.get_scores(query)
            ours = list(index.scores(query, allowed=ALL).values())
            np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)


def test_search_matches_scores_and_orders_by_score_then_id() -> None:
    docs = random_corpus(5)
    index = BM25Index.build(docs)
    for query in (["w3", "w7"], ["w1"], ["w0", "w2", "w2", "w9"]):
        full = index.scores(query, allowed=ALL)
        expected = sorted(((i, s) for i, s in full.items() if s > 0), key=lambda p: (-p[1], p[0]))
        assert index.search(query, k=1000, allowed=ALL) == expected
        assert index.search(query, k=5, allowed=ALL) == expected[:5]


def test_ties_break_by_id_even_at_the_cutoff() -> None:
    docs = [(doc_id, ["same", "words"]) for doc_id in ["m", "c", "x", "a", "q"]]
    docs.append(("z", ["other"]))
    index = BM25Index.build(docs)
    top = index.search(["same"], k=3, allowed=ALL)
    assert [doc_id for doc_id, _ in top] == ["a", "c", "m"]
    assert len({score for _, score in top}) == 1


def test_only_positive_scores_are_candidates() -> None:
    index = BM25Index.build([("a", ["x"]), ("b", ["y"]), ("c", [])])
    assert index.search(["x"], k=10, allowed=ALL) == [
        ("a", pytest.approx(index.scores(["x"], allowed=ALL)["a"]))
    ]
    assert index.search(["nothing"], k=10, allowed=ALL) == []
    assert index.search([], k=10, allowed=ALL) == []


@pytest.mark.parametrize("variant", ["lucene", "okapi"])
def test_allowed_subset_scores_equal_full_scores(variant: str) -> None:
    docs = random_corpus(6, n_docs=120)
    index = BM25Index.build(docs, variant=variant)
    rng = random.Random(7)
    ids = [doc_id for doc_id, _ in docs]
    for _ in range(20):
        allowed = set(rng.sample(ids, k=rng.randint(1, 60)))
        query = [f"w{rng.randint(0, 24)}" for _ in range(rng.randint(1, 4))]
        full = index.scores(query, allowed=ALL)
        subset = index.scores(query, allowed=allowed)
        assert set(subset) == allowed
        for doc_id, score in subset.items():
            assert score == pytest.approx(full[doc_id], abs=1e-12)
        hits = index.search(query, k=10, allowed=allowed)
        assert {doc_id for doc_id, _ in hits} <= allowed
        expected = sorted(((i, full[i]) for i in allowed if full[i] > 0), key=lambda p: (-p[1], p[0]))[:10]
        assert [i for i, _ in hits] == [i for i, _ in expected]
        assert index.search(query, k=10, allowed=index.mask(allowed)) == hits


def test_large_query_uses_dense_path_and_respects_mask() -> None:
    # many postings relative to the index size: exercises the dense accumulator
    docs = [(f"d{i}", ["common", f"t{i % 3}"]) for i in range(50)]
    index = BM25Index.build(docs)
    allowed = {f"d{i}" for i in range(0, 50, 7)}
    hits = index.search(["common", "t1", "t2"], k=50, allowed=allowed)
    assert {doc_id for doc_id, _ in hits} == allowed
    full = index.scores(["common", "t1", "t2"], allowed=ALL)
    assert all(score == pytest.approx(full[i]) for i, score in hits)


class ReadLog(np.ndarray):
    """An impacts array that logs which postings a query reads (white-box spy)."""

    offset = 0
    log: set[int]

    def _positions(self) -> np.ndarray:
        return self.offset + np.arange(self.size)

    def __getitem__(self, key):
        out = np.ndarray.__getitem__(self, key)
        if isinstance(key, slice):  # a view: nothing read yet
            out = out.view(ReadLog)
            out.offset, out.log = self.offset + (key.start or 0), self.log
            return out
        self.log.update(self._positions()[key].tolist())
        return np.asarray(out)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return getattr(ufunc, method)(*map(_read_all, inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return func(*map(_read_all, args), **kwargs)


def _read_all(item):
    """Unwrap ``ReadLog`` arrays (also inside lists), logging every posting they cover."""
    if isinstance(item, ReadLog):
        item.log.update(item._positions().tolist())
        return item.view(np.ndarray)
    if isinstance(item, list | tuple):
        return type(item)(map(_read_all, item))
    return item


@pytest.mark.parametrize("n_allowed", [2, 40])
def test_disallowed_documents_are_never_scored(n_allowed: int) -> None:
    docs = random_corpus(8, n_docs=80)
    index = BM25Index.build(docs)
    spy = index._impacts.copy().view(ReadLog)
    spy.log = set()
    index._impacts = spy
    allowed = {doc_id for doc_id, _ in docs[:n_allowed]}
    query = ["w0", "w1", "w1", "w5"]
    hits = index.search(query, k=100, allowed=allowed)
    assert hits and {doc_id for doc_id, _ in hits} <= allowed
    assert set(index.scores(query, allowed=allowed)) == allowed
    read_docs = {index.ids[d] for d in index._docs[sorted(spy.log)].tolist()}
    assert read_docs and read_docs <= allowed
    spy.log.clear()
    index.search(query, k=100, allowed=ALL)
    assert {index.ids[d] for d in index._docs[sorted(spy.log)].tolist()} - allowed  # spy works


def test_empty_and_unknown_allowed_sets_return_nothing() -> None:
    index = BM25Index.build(random_corpus(9))
    assert index.search(["w0"], k=10, allowed=set()) == []
    assert index.search(["w0"], k=10, allowed=["not-an-id"]) == []
    assert index.scores(["w0"], allowed=()) == {}
    assert index.search(["w0"], k=10, allowed=np.zeros(len(index), dtype=bool)) == []


def test_allowed_is_required_and_fails_closed() -> None:
    index = BM25Index.build(random_corpus(10))
    with pytest.raises(TypeError):
        index.search(["w0"], k=10)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="ALL"):
        index.search(["w0"], k=10, allowed=None)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="ALL"):
        index.scores(["w0"], allowed=None)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        index.search(["w0"], k=10, allowed="d001")
    with pytest.raises(ValidationError):
        index.search(["w0"], k=10, allowed=np.ones(3, dtype=bool))
    with pytest.raises(ValidationError):
        index.search(["w0"], k=10, allowed=np.ones(len(index), dtype=np.int8))
    with pytest.raises(ValidationError):
        index.search("w0", k=10, allowed=ALL)
    with pytest.raises(ValidationError):
        index.search(["w0"], k=0, allowed=ALL)
    assert repr(ALL) == "ALL"


@pytest.mark.parametrize(
    ("k1", "b"), [(-0.1, 0.75), (float("nan"), 0.75), (1.2, -0.01), (1.2, 1.01), (1.2, math.nan)]
)
def test_parameters_are_validated(k1: float, b: float) -> None:
    with pytest.raises(ConfigError):
        BM25Index.build([("a", ["x"])], k1=k1, b=b)


def test_edge_parameters_are_accepted() -> None:
    index = BM25Index.build([("a", ["x", "x"]), ("b", ["x", "y"])], k1=0.0, b=1.0)
    scores = index.scores(["x"], allowed=ALL)
    assert scores["a"] == pytest.approx(scores["b"])  # k1 = 0: term presence only


def test_unknown_variant_names_valid_choices() -> None:
    with pytest.raises(ConfigError, match="lucene, okapi"):
        BM25Index.build([("a", ["x"])], variant="bm25+")


def test_build_rejects_bad_input() -> None:
    with pytest.raises(ValidationError, match="duplicate"):
        BM25Index.build([("a", ["x"]), ("a", ["y"])])
    with pytest.raises(ValidationError, match="tokens"):
        BM25Index.build([("a", "not tokenized")])
    with pytest.raises(ValidationError):
        BM25Index.build([(1, ["x"])])  # type: ignore[list-item]


def test_empty_index() -> None:
    index = BM25Index.build([])
    assert len(index) == 0
    assert index.search(["x"], k=3, allowed=ALL) == []
    assert index.scores(["x"], allowed=ALL) == {}


def test_round_trip_through_arrays_and_json(tmp_path) -> None:
    docs = zh_corpus()
    index = BM25Index.build(docs, k1=1.4, b=0.6, variant="okapi")
    arrays, meta = index.to_arrays()
    for name, array in arrays.items():
        np.save(tmp_path / f"{name}.npy", array, allow_pickle=False)
    (tmp_path / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    loaded = BM25Index.from_arrays(
        {name: np.load(tmp_path / f"{name}.npy", allow_pickle=False) for name in arrays},
        json.loads((tmp_path / "meta.json").read_text(encoding="utf-8")),
    )
    assert loaded.ids == index.ids and len(loaded) == len(index) == len(docs)
    assert loaded.variant is BM25Variant.OKAPI
    for query in ZH_QUERIES:
        tokens = tokenize(query)
        assert loaded.search(tokens, k=5, allowed=ALL) == index.search(tokens, k=5, allowed=ALL)
        assert loaded.scores(tokens, allowed=ALL) == index.scores(tokens, allowed=ALL)


def test_from_arrays_rejects_malformed_input() -> None:
    arrays, meta = BM25Index.build(random_corpus(11)).to_arrays()
    with pytest.raises(SearchIndexError):
        BM25Index.from_arrays(arrays, {**meta, "format_version": 99})
    with pytest.raises(SearchIndexError, match="vocabulary"):
        BM25Index.from_arrays(arrays, {k: v for k, v in meta.items() if k != "vocabulary"})
    with pytest.raises(SearchIndexError):
        BM25Index.from_arrays({k: v for k, v in arrays.items() if k != "indptr"}, meta)
    with pytest.raises(SearchIndexError):
        BM25Index.from_arrays({**arrays, "doc_lengths": arrays["doc_lengths"][:-1]}, meta)
    with pytest.raises(SearchIndexError):
        BM25Index.from_arrays({**arrays, "doc_indices": arrays["doc_indices"] + 1000}, meta)
    with pytest.raises(SearchIndexError):
        BM25Index.from_arrays({**arrays, "term_frequencies": arrays["term_frequencies"] * 0.5}, meta)


def test_index_arrays_are_read_only() -> None:
    arrays, _ = BM25Index.build(random_corpus(12)).to_arrays()
    with pytest.raises(ValueError):
        arrays["doc_lengths"][0] = 99


def test_allowed_statistics_equal_an_index_of_the_allowed_documents_only() -> None:
    docs = random_corpus(11, n_docs=90)
    index = BM25Index.build(docs)
    rng = random.Random(3)
    ids = [doc_id for doc_id, _ in docs]
    for _ in range(15):
        allowed = set(rng.sample(ids, k=rng.randint(1, 45)))
        query = [f"w{rng.randint(0, 24)}" for _ in range(rng.randint(1, 4))]
        alone = BM25Index.build([(i, t) for i, t in docs if i in allowed])
        expected = alone.scores(query, allowed=ALL)
        got = index.scores(query, allowed=allowed, statistics=TermStatistics.ALLOWED)
        assert set(got) == set(expected)
        for doc_id, score in got.items():
            assert score == pytest.approx(expected[doc_id], abs=1e-12)
        hits = index.search(query, k=7, allowed=allowed, statistics="allowed")
        reference = alone.search(query, k=7, allowed=ALL)
        assert [i for i, _ in hits] == [i for i, _ in reference]
        assert [s for _, s in hits] == pytest.approx([s for _, s in reference], abs=1e-12)


def test_a_document_outside_the_allowed_set_moves_allowed_statistics_not_at_all() -> None:
    docs = [("a", ["rare", "x"]), ("b", ["y", "x"]), ("c", ["z"])]
    with_hidden = [*docs, ("hidden", ["rare", "rare"])]
    allowed = {"a", "b", "c"}
    before = BM25Index.build(docs).search(["rare"], k=3, allowed=allowed, statistics="allowed")
    after = BM25Index.build(with_hidden).search(["rare"], k=3, allowed=allowed, statistics="allowed")
    assert before == after
    index_wide = BM25Index.build(with_hidden).search(["rare"], k=3, allowed=allowed)
    assert index_wide != before  # index-wide statistics are the side channel


def test_allowed_statistics_need_the_lucene_variant() -> None:
    index = BM25Index.build([("a", ["x"])], variant="okapi")
    with pytest.raises(ConfigError, match="lucene"):
        index.search(["x"], k=1, allowed={"a"}, statistics="allowed")
    with pytest.raises(ConfigError, match="term statistics"):
        index.search(["x"], k=1, allowed={"a"}, statistics="global")
