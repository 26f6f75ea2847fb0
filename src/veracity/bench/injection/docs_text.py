"""Documentation as a check of the injection fit: the pages of the docs tuning sets.

Technical documentation is what a knowledge base of ours mostly holds, and it is
full of the words an attack uses for something else: a *token* to get, a key to
*override*, files to *ignore*, the *only* option, a *system* setting. Read as
non-official pages, the documentation folders of the answer model's docs tuning
sets (``benchmarks/docs_questions/tune/``: Poetry and MkDocs in English, FastAPI
and Ant Design in Chinese) are benign chunks the fit measures but does not train
on: the share of them quarantined is held to the same false-quarantine budget as
the templates and recorded with the share of pages (:mod:`.fit` says why they
are not training data). The reporting docs sets (HTTPX, Vite) are never read
here; ``benchmarks/bench_injection_real_text.py --docs`` measures on them.

The pages are not in this repository (their licences are their projects'; each
set's YAML header names the repository and commit). ``docs_windows.json`` holds,
per chunk, the feature names of its sentence windows that carry any (no text),
with the digest of the pages read, so the fit and its tests run without them.
The features depend on the cue words, so a change to them needs a rewrite, with
each set's folder under ``DIR`` named as its YAML file's stem:

    python -m veracity.bench.injection.docs_text --docs-root DIR
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import yaml

from ...model.contracts import Chunk, Document
from ...parse.batch import load_sources
from ...parse.chunking import chunk_for_index
from ...parse.metadata import GovernanceDefaults
from ...pipeline.injection.signals import Window, windows

DOCS_WINDOWS_FILE: Final = Path(__file__).with_name("docs_windows.json")
DEFAULT_SETS: Final = Path("benchmarks/docs_questions/tune")
"""The docs tuning sets' question files, relative to the repository root."""


Page = list[list[list[str]]]
"""A page as stored: per chunk, per featured window, the feature names."""


def documentation_pages(folder: Path) -> Iterator[tuple[Document, tuple[Chunk, ...]]]:
    """Every page of a documentation folder with its chunks, as ``veracity add`` reads and cuts
    them with the defaults a new user gets, in source-id order."""
    loaded = load_sources([folder], defaults=GovernanceDefaults(tenant="docs"))
    for _, document in sorted(loaded.documents, key=lambda item: item[1].source_id):
        yield document, chunk_for_index(document)


def read_set(folder: Path, digest: Any) -> tuple[list[Page], int, int]:
    """Per page of ``folder`` with a featured window, each chunk's featured windows; the number
    of pages and of chunks read. ``digest`` takes every page's path and body."""
    pages: list[Page] = []
    page_count = chunks = 0
    for document, page_chunks in documentation_pages(folder):
        page_count += 1
        digest.update(f"{document.source_id}\0{document.body}\1".encode())
        found: Page = []
        for chunk in page_chunks:
            chunks += 1
            found.append([sorted(w.features) for w in windows(chunk.text, chunk.heading_path) if w.features])
        if any(found):
            pages.append(found)
    return pages, page_count, chunks


def build(docs_root: Path, sets: Path = DEFAULT_SETS) -> dict[str, Any]:
    """The stored form of every docs tuning set found under ``docs_root``."""
    digest = hashlib.sha256()
    sources, pages = [], []
    for spec_path in sorted(sets.glob("*.yaml")):
        spec = yaml.safe_load(spec_path.read_text(encoding="utf-8"))
        found, page_count, chunk_count = read_set(docs_root / spec_path.stem, digest)
        pages.extend(found)
        sources.append({"name": spec_path.stem, **spec["source"], "pages": page_count, "chunks": chunk_count})
    return {
        "sources": sources,
        "text_digest": digest.hexdigest(),
        "pages_total": sum(s["pages"] for s in sources),
        "chunks_total": sum(s["chunks"] for s in sources),
        "written_by": "python -m veracity.bench.injection.docs_text --docs-root DIR",
        "pages": pages,
    }


def load(path: Path = DOCS_WINDOWS_FILE) -> tuple[list[list[list[Window]]], int, int, str]:
    """The stored pages (each a list of chunks, each a window list), the pages and chunks read,
    the text digest."""
    stored = json.loads(path.read_text(encoding="utf-8"))
    pages = [
        [
            [Window(index=i, hidden=False, features=frozenset(names)) for i, names in enumerate(chunk)]
            for chunk in page
        ]
        for page in stored["pages"]
    ]
    return pages, int(stored["pages_total"]), int(stored["chunks_total"]), str(stored["text_digest"])


def sources(path: Path = DOCS_WINDOWS_FILE) -> list[dict[str, Any]]:
    """What the stored file was read from: each set's name, repository, commit, pages, chunks."""
    return list(json.loads(path.read_text(encoding="utf-8"))["sources"])


def main(argv: Sequence[str] | None = None) -> None:
    """Read the docs tuning sets' pages and write ``docs_windows.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs-root", type=Path, required=True, help="folder holding one folder per set")
    parser.add_argument("--sets", type=Path, default=DEFAULT_SETS, help=f"question files ({DEFAULT_SETS})")
    parser.add_argument("--out", type=Path, default=DOCS_WINDOWS_FILE, help="default: the file the fit reads")
    args = parser.parse_args(argv)
    missing = [p.stem for p in sorted(args.sets.glob("*.yaml")) if not (args.docs_root / p.stem).is_dir()]
    if not any(args.sets.glob("*.yaml")):
        parser.error(f"no question files in {args.sets}")
    if missing:
        parser.error(f"not found under {args.docs_root}: {', '.join(missing)}")
    stored = build(args.docs_root, args.sets)
    text = json.dumps(stored, ensure_ascii=False, separators=(",", ":"))
    args.out.write_text(text + "\n", encoding="utf-8")
    print(
        f"wrote {args.out}: {stored['pages_total']} pages, {stored['chunks_total']} chunks; "
        f"{len(stored['pages'])} pages have a window with features"
    )


if __name__ == "__main__":
    main()
