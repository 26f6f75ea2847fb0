"""A seeded synthetic Markdown corpus with governance metadata, for benchmarks.

Words: the demo fixture's own rjieba words (frequent head) plus generated
two/three-character combinations of its Chinese characters (long tail), plus
latin identifiers (``config.opt_12``, ``v3.2``, ``--flag7``, ``E1042``).
Terms follow a Zipf law. Each document has front matter (tenant, status,
visibility/roles, product-version range, validity) drawn so that a public
principal asking about 3.2 today sees roughly 30-60% of its tenant's documents,
and 4-9 sections of one chunk each under the contextual chunker (400 chars).

Vectors are not embedded: :class:`RandomEmbedder` gives each text a seeded
random unit vector (deterministic per text), so building 100k vectors costs
seconds and both backends under test get identical vectors.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from veracity.fixtures import fixture_documents
from veracity.text.tokens import tokenize

TENANT_ROLES = ["public", "support", "security"]


class RandomEmbedder:
    """Seeded vectors per text (no model): for timing, and for recall with neighbourhoods.

    Each text's hash picks one of ``clusters`` seeded unit centres and seeds a Gaussian
    offset of norm about ``spread``: a Gaussian mixture, so a vector's nearest rows are its
    cluster's (cosine ≈ 1 / (1 + spread²) inside, ≈ 0 across), as real embeddings have
    neighbourhoods. Isotropic random vectors have none (every top 10 beyond the first row
    is noise), which makes any approximate search look broken; meaning is still absent.
    """

    def __init__(self, dim: int = 512, clusters: int = 4096, spread: float = 0.6) -> None:
        self.dim = dim
        self.model_id = f"random-mixture-{dim}-{clusters}@bench"
        centres = np.random.default_rng(20261130).standard_normal((clusters, dim), dtype=np.float32)
        self._centres = centres / np.linalg.norm(centres, axis=1, keepdims=True)
        self._scale = spread / np.sqrt(dim)

    def embed_batch(self, texts: Sequence[str], *, kind: str = "passage") -> np.ndarray:
        rows = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
            rng = np.random.default_rng(seed)
            centre = self._centres[seed % len(self._centres)]
            rows[i] = centre + self._scale * rng.standard_normal(self.dim, dtype=np.float32)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        return rows


def vocabulary(rng: np.random.Generator, size: int = 30_000) -> list[str]:
    """Head: the fixture's words; tail: generated CJK words and latin identifiers."""
    head: list[str] = []
    chars: set[str] = set()
    for document in fixture_documents():
        for token in tokenize(document.body, drop_stopwords=True):
            head.append(token)
            chars.update(re.findall(r"[\u4e00-\u9fff]", token))
    head = list(dict.fromkeys(head))
    alphabet = sorted(chars)
    words = set(head)
    while len(words) < size * 0.85:
        n = int(rng.integers(2, 4))
        words.add("".join(alphabet[j] for j in rng.integers(0, len(alphabet), size=n)))
    latin = []
    for i in range(int(size * 0.15)):
        kind = i % 4
        latin.append((f"config.opt_{i}", f"v{i % 7}.{i % 11}", f"--flag{i}", f"E{1000 + i}")[kind])
    tail = sorted(words - set(head))
    rng.shuffle(tail)
    return head + tail + latin


def _zipf(n: int, s: float = 1.0, offset: int = 10) -> np.ndarray:
    weights = 1.0 / (np.arange(1, n + 1) + offset) ** s
    return weights / weights.sum()


class WordStream:
    """Zipf-distributed words, drawn in large seeded batches."""

    def __init__(self, rng: np.random.Generator, words: list[str], batch: int = 1 << 20) -> None:
        self._rng, self._words, self._batch = rng, words, batch
        self._p = _zipf(len(words))
        self._buffer: list[int] = []

    def next(self) -> str:
        if not self._buffer:
            self._buffer = self._rng.choice(len(self._words), size=self._batch, p=self._p).tolist()
        return self._words[self._buffer.pop()]


def _sentence(stream: WordStream, chars: int) -> str:
    parts: list[str] = []
    length = 0
    while length < chars:
        word = stream.next()
        piece = f" {word} " if word.isascii() else word
        parts.append(piece)
        length += len(piece)
    return "".join(parts).strip() + "。"


def front_matter(rng: np.random.Generator, number: int, tenants: int) -> dict[str, str]:
    """Governance metadata of document ``number``."""
    meta = {
        "id": f"doc-{number:06d}",
        "revision": "1",
        "title": f"文档 {number}",
        "tenant": f"tenant-{number % tenants}",
        "valid_from": "2024-01-01T00:00:00Z",
        "status": "active",
        "visibility": "public",
        "trust": "official",
    }
    roll = rng.random(5)
    if roll[0] < 0.10:
        meta["status"] = "retired"
    elif roll[0] < 0.15:
        meta["status"] = "withdrawn"
    if roll[1] < 0.30:
        meta["visibility"] = "internal"
        meta["allowed_roles"] = "[support]" if roll[1] < 0.2 else "[security]"
    if roll[2] < 0.25:
        meta["version_min"] = '"3.0"'
    elif roll[2] < 0.40:
        meta["version_max"] = '"2.9"'
    elif roll[2] < 0.50:
        meta["version_min"] = '"3.3"'
    if roll[3] < 0.10:
        meta["valid_from"] = "2027-01-01T00:00:00Z"
    if roll[4] < 0.15:
        meta["trust"] = "community"
    return meta


def markdown_document(rng: np.random.Generator, number: int, tenants: int, stream: WordStream) -> str:
    """One Markdown file: front matter, a title, 4-9 sections of about 150-330 characters."""
    meta = front_matter(rng, number, tenants)
    lines = ["---", *(f"{key}: {value}" for key, value in meta.items()), "---", "", f"# {meta['title']}", ""]
    for section in range(int(rng.integers(4, 10))):
        lines += [f"## {_sentence(stream, 8)[:-1]} {section}", ""]
        lines += [_sentence(stream, int(rng.integers(150, 330))), ""]
    return "\n".join(lines)


CHUNKS_PER_DOCUMENT = 6.45
"""Measured mean chunks per synthetic document under the contextual chunker."""


def documents_for(chunks: int) -> int:
    """How many documents :func:`write_corpus` writes for about ``chunks`` chunks."""
    return int(chunks / CHUNKS_PER_DOCUMENT) + 1


def write_corpus(folder: Path, n_docs: int, tenants: int, seed: int) -> list[Path]:
    """Write ``n_docs`` Markdown files plus one tenant.yaml per tenant; return the files."""
    rng = np.random.default_rng(seed)
    stream = WordStream(rng, vocabulary(rng))
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for number in range(n_docs):
        path = folder / f"doc-{number:06d}.md"
        path.write_text(markdown_document(rng, number, tenants, stream), encoding="utf-8")
        files.append(path)
    for tenant in range(tenants):
        sub = folder / f"roles-{tenant}"
        sub.mkdir(exist_ok=True)
        (sub / "tenant.yaml").write_text(
            f"tenant: tenant-{tenant}\nroles: [{', '.join(TENANT_ROLES)}]\n", encoding="utf-8"
        )
    return files


def add_tree_arguments(parser: argparse.ArgumentParser) -> None:
    """``--chunks``, ``--seed``, ``--src`` and ``--workdir``: what a benchmark takes that compares
    this source tree with another on a corpus of :func:`write_corpus`."""
    parser.add_argument("--chunks", type=int, default=100_000, help="about this many chunks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--src", default=None, help="another source tree to compare (its src folder)")
    parser.add_argument(
        "--workdir", type=made_folder, default=None,
        help="where the corpus and knowledge bases go (created if missing; default: a temporary folder)",
    )  # fmt: skip


def made_folder(text: str) -> Path:
    """``--workdir``'s type: the folder, created with its parents if it does not exist yet."""
    folder = Path(text)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot create {folder}: {exc.strerror}") from exc
    return folder


def run_in_tree(program: str, args: Sequence[str], pythonpath: str | None) -> Any:
    """``python -c program *args`` in a fresh process with ``PYTHONPATH=pythonpath`` (``None``: this
    tree), and the JSON of its output's last line; exits with its error output when it fails."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    done = subprocess.run(
        [sys.executable, "-c", program, *args], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"failed ({pythonpath or 'this tree'}): {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
