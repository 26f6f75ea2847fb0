"""The documentation sources of the guard's training data, benign: the docs tuning sets' pages
(a seeded half trains, the other half chooses the threshold), wide documentation in many
languages, and the optional pages about prompts and about LLM security
(``train --add-sources``). Each is cut as the reader's data is (headings, then blank lines)."""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterator
from typing import Final

from ..reading.data import DATA as READER_DATA
from ..reading.data import DOCS_TREES, markdown_chunks
from .texts import DATA, GuardExample, clip, data_lines, guard_example


def docs_half(tree: str, path: str) -> str:
    """``train`` or ``calibrate``: the seeded half of the docs tuning sets' files a file belongs to
    (by the sha256 of ``<tree>/<path>``), so the threshold is chosen on pages the guard never saw."""
    return "train" if hashlib.sha256(f"{tree}/{path}".encode()).digest()[0] % 2 == 0 else "calibrate"


def documentation(half: str = "train") -> Iterator[tuple[str, str, str]]:
    """(id, language, section) of the docs tuning sets' Markdown files in ``half``, cut as the
    reader's data is (headings, then blank lines); nothing when the trees are not here."""
    for tree in sorted(DOCS_TREES):
        folder = READER_DATA / "docs" / tree
        for path in sorted(folder.rglob("*.md")) if folder.is_dir() else []:
            rel = path.relative_to(folder).as_posix()
            if docs_half(tree, rel) == half:
                for i, section in enumerate(markdown_chunks(path.read_text(encoding="utf-8"))):
                    yield f"{tree}/{rel}#{i}", tree.rsplit("-", 1)[1], section


def docs() -> Iterator[GuardExample]:
    """Sections of the training half of the docs tuning sets' pages (Markdown, code, tables, notes),
    benign: without them the guard takes documentation markup itself for an attack."""
    for key, language, section in documentation("train"):
        yield guard_example("docs", key, language, clip(section), "benign", "documentation")


DOCS_WIDE: Final = (
    ("docs_wide/fastapi_docs.jsonl.gz", "fastapi-zh", 1500),
    ("docs_wide/antd_docs.jsonl.gz", "antd-zh", 1000),
)
"""(file, the docs tuning set of the same repository, sections kept) of :func:`docs_wide`."""
_FASTAPI_PAGE = re.compile(r"docs/([a-z-]+)/docs/(.+)")
_ANTD_PAGE = re.compile(r"(.+)\.(zh-CN|en-US)\.md")
_LANGUAGES = {"zh-hant": "zht", "zh-CN": "zh", "en-US": "en"}


def tuning_twin(path: str) -> tuple[str, str]:
    """(language, the path of the same page in the docs tuning set's Chinese tree) of a
    :data:`DOCS_WIDE` page: FastAPI's ``docs/<lang>/docs/<page>``, Ant Design's ``<page>.<lang>.md``."""
    if m := _FASTAPI_PAGE.fullmatch(path):
        return _LANGUAGES.get(m[1], m[1]), f"docs/zh/docs/{m[2]}"
    if m := _ANTD_PAGE.fullmatch(path):
        return _LANGUAGES[m[2]], f"{m[1]}.zh-CN.md"
    raise ValueError(f"not a page of a wide documentation file: {path}")


def docs_wide(seed: int = 0) -> Iterator[GuardExample]:
    """A seeded sample of the sections of FastAPI's documentation in all its languages and of Ant
    Design's (:data:`DOCS_WIDE`), benign; a page whose twin in the docs tuning set is in its
    calibration half (:func:`docs_half`) is left out in every language."""
    for rel, tree, keep in DOCS_WIDE:
        found = []
        for row in data_lines(rel):
            language, twin = tuning_twin(row["path"])
            if docs_half(tree, twin) == "calibrate" and (READER_DATA / "docs" / tree / twin).is_file():
                continue
            found += [(f"{row['path']}#{i}", language, t) for i, t in enumerate(markdown_chunks(row["text"]))]
        yield from _benign_sample("docs_wide", found, keep, f"{seed}:{rel}")


def _benign_sample(
    source: str, found: list[tuple[str, str, str]], count: int, seed_key: str
) -> Iterator[GuardExample]:
    """``count`` of the ``(id, language, section)`` in ``found``, sampled with ``seed_key``, as benign
    documentation examples of ``source`` in id order."""
    kept = random.Random(seed_key).sample(found, min(count, len(found)))
    for key, language, section in sorted(kept):
        yield guard_example(source, key, language, clip(section), "benign", "documentation")


PROMPTING_DOCS: Final = "docs_wide/promptguide_docs.jsonl.gz"
PROMPTING_SECTIONS: Final = 1500
_GUIDE_PAGE = re.compile(r"pages/.+\.([a-z]{2})\.mdx")
_GUIDE_LANGUAGES = {"jp": "ja", "kr": "ko"}
_MDX_SYNTAX = re.compile(r"^(?:import .+ from .+|export .+|<[A-Z][^>]*/?>|</[A-Z][^>]*>)\s*$", re.MULTILINE)
"""Lines of MDX (imports, exports, components) that are page machinery, not page text."""


def prompting_sections(half: str) -> list[tuple[str, str, str]]:
    """(id, language, section) of the pages about prompts (:data:`PROMPTING_DOCS`) in ``half``:
    ``train`` or ``calibrate`` by :func:`docs_half` of the page without its language, so a page
    is on one side in every language."""
    found = []
    for row in data_lines(PROMPTING_DOCS):
        if not (m := _GUIDE_PAGE.fullmatch(row["path"])):
            continue
        if docs_half("promptguide", row["path"][: m.start(1) - 1]) != half:
            continue
        language = _GUIDE_LANGUAGES.get(m[1], m[1])
        text = _MDX_SYNTAX.sub("", row["text"])
        found += [(f"{row['path']}#{i}", language, t) for i, t in enumerate(markdown_chunks(text))]
    return found


def docs_prompting(seed: int = 0) -> Iterator[GuardExample]:
    """A seeded sample of :data:`PROMPTING_SECTIONS` sections of the training half of pages *about*
    prompts, assistants and prompt attacks (DAIR.AI's Prompt Engineering Guide, 13 languages),
    benign: they explain and quote example prompts and attacks without addressing the model that
    reads them, the kind of page the guard quarantined falsely. The other half calibrates."""
    yield from _benign_sample(
        "docs_prompting", prompting_sections("train"), PROMPTING_SECTIONS, f"{seed}:{PROMPTING_DOCS}"
    )


SECURITY_DOCS: Final = ("docs_wide/owasp_llm_docs.jsonl.gz", "docs_wide/nemoguardrails_docs.jsonl.gz")
SECURITY_SECTIONS: Final = 1500
_OWASP_TRANSLATION = re.compile(r"2_0_vulns/translations/([a-z]{2})-([A-Z]{2})/(.+)\.md")
_OWASP_ENTRY = re.compile(r"(?:LLM|ADD)\d\d")
_PROMPT_FILES = re.compile(r"(?:^|/)prompts/")
"""Files written for a model to read (an agent's prompts), not pages about prompts: left out."""


def security_sections(half: str) -> list[tuple[str, str, str]]:
    """(id, language, section) of the pages about LLM security and about configuring one's own
    assistant (:data:`SECURITY_DOCS`) in ``half`` (:func:`docs_half` of the page; a translated
    OWASP entry counts as its entry, so it is on one side in every language); none when the
    files are not collected."""
    found = []
    for rel in SECURITY_DOCS:
        for row in data_lines(rel) if (DATA / rel).is_file() else []:
            path, language, page = row["path"], "en", row["path"]
            if _PROMPT_FILES.search(path):
                continue
            if m := _OWASP_TRANSLATION.fullmatch(path):
                language, page = ("zht" if m[2] == "TW" else m[1]), m[3]
            if entry := _OWASP_ENTRY.match(page.rsplit("/", 1)[-1]):
                page = entry[0]
            if docs_half(rel, page) == half:
                found += [(f"{path}#{i}", language, t) for i, t in enumerate(markdown_chunks(row["text"]))]
    return found


def docs_security(seed: int = 0) -> Iterator[GuardExample]:
    """A seeded sample of :data:`SECURITY_SECTIONS` sections of the training half of pages about LLM
    security (OWASP's Top 10 for LLM applications, 11 languages: they describe and quote attacks)
    and about configuring one's own assistant (NeMo Guardrails' documentation: prompts and rails
    of one's own bot), benign. The other half calibrates."""
    yield from _benign_sample(
        "docs_security", security_sections("train"), SECURITY_SECTIONS, f"{seed}:{SECURITY_DOCS[0]}"
    )
