"""The e5 tokenizer cache: the same ids as a tokenizer built from the model file, whatever state
the cache is in."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from veracity.reader.cached import cache_folder, e5_tokenizer, tuned_arrays
from veracity.reader.e5_file import read_e5_file, read_tokenizer_tables
from veracity.reader.tokenizer import Tokenizer, default_tokenizer

TEXTS = (
    "What is the default port of vite preview?",
    "vite preview 默认监听哪个端口？ 4173",
    "Ｆｕｌｌｗｉｄｔｈ\tand\u00a0spaces  collapse\u3000here",
    "東京都と台北市 — naïve café, Œuvre; 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ☃ \U0001f600",
    " leading space and trailing ",
    "",
)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VERACITY_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def same_as_built(tokenizer: Tokenizer) -> None:
    reference = default_tokenizer()
    for text in TEXTS:
        assert tokenizer.encode(text) == reference.encode(text)
        assert tokenizer.encode_with_offsets(text) == reference.encode_with_offsets(text)
        assert tokenizer.normalize(text) == reference.normalize(text)
    assert (tokenizer.bos, tokenizer.eos, tokenizer.pad, tokenizer.unk) == (
        reference.bos,
        reference.eos,
        reference.pad,
        reference.unk,
    )
    assert tokenizer.vocab_size == reference.vocab_size
    assert tokenizer.piece(12345) == reference.piece(12345)


def test_the_first_load_writes_the_cache_and_the_second_reads_it(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_file = read_e5_file()
    same_as_built(e5_tokenizer(model_file))
    assert (cache_folder(model_file) / "manifest.json").is_file()

    def no_build(self: Tokenizer, tables: object) -> None:
        raise AssertionError("built from the model file, not read from the cache")

    monkeypatch.setattr(Tokenizer, "__init__", no_build)
    same_as_built(e5_tokenizer(read_e5_file()))


def test_a_damaged_cache_is_rebuilt(cache: Path) -> None:
    model_file = read_e5_file()
    e5_tokenizer(model_file)
    arrays = cache_folder(model_file) / "arrays.bin"
    data = bytearray(arrays.read_bytes())
    data[len(data) // 2] ^= 0xFF
    arrays.write_bytes(bytes(data))
    same_as_built(e5_tokenizer(model_file))
    assert arrays.read_bytes() != bytes(data)  # written again, whole


def test_an_unwritable_cache_still_tokenizes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("VERACITY_CACHE", str(blocker / "cache"))
    same_as_built(e5_tokenizer())


def test_the_model_file_parses_its_tokenizer_only_when_asked() -> None:
    model_file = read_e5_file()
    assert "tokenizer" not in vars(model_file)
    tables, reference = model_file.tokenizer, read_tokenizer_tables()
    assert tables.pieces == reference.pieces and tables.normalization == reference.normalization
    assert np.array_equal(tables.scores, reference.scores)


def test_tuned_arrays_are_the_shipped_ones_and_read_back_mapped(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from veracity.reader.choice import chooser_files
    from veracity.reader.model import weights_digest

    weights_path, _ = chooser_files()
    digest = weights_digest(weights_path)
    with np.load(weights_path) as stored:
        shipped = {key: stored[key] for key in stored.files}
    first = tuned_arrays(weights_path, digest)
    assert first.keys() == shipped.keys()
    assert all(np.array_equal(first[k], shipped[k]) and first[k].dtype == shipped[k].dtype for k in shipped)

    def no_inflate(*args: object, **kwargs: object) -> None:
        raise AssertionError("read from the .npz, not from the cache")

    monkeypatch.setattr(np, "load", no_inflate)
    again = tuned_arrays(weights_path, digest)
    assert all(np.array_equal(again[k], shipped[k]) for k in shipped)
    assert not next(iter(again.values())).flags.writeable  # a view of the mapped file
    monkeypatch.undo()
    monkeypatch.setenv("VERACITY_CACHE", str(cache))
    data = next(cache.glob("tuned-*/arrays.bin"))
    data.write_bytes(data.read_bytes()[:-7])  # truncated
    rebuilt = tuned_arrays(weights_path, digest)
    assert all(np.array_equal(rebuilt[k], shipped[k]) for k in shipped)
