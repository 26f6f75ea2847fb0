"""Dog food: veracity's own README and docs/, ingested with the defaults, answer questions about veracity.

The folder is laid out as in the repository (``README.md``, ``docs/*.md``), so a
citation's source id is the page's path without its suffix (``docs/serving``).
The default embedder is used, as a new user would. Each question must be
answered (answer or partial) with a claim citing the page that explains it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import veracity

ROOT = Path(__file__).resolve().parents[1]

QUESTIONS = [
    # (question, pages a right claim may cite, a word the cited claim says)
    ("How do I create an API key?", {"README", "docs/serving"}, "keys create"),
    (
        "Which database should I use when several machines serve one knowledge base?",
        {"docs/postgresql", "README"},
        "PostgreSQL",
    ),
    ("What does the return gate check?", {"docs/architecture", "README"}, "catalog"),
    ("How do I run the tests?", {"README"}, "pytest"),
    (
        "Does --strict reject files that are missing governance fields?",
        {"README", "docs/knowledge-base"},
        "--strict",
    ),
]


@pytest.fixture(scope="module")
def own_docs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[veracity.LocalKnowledgeBase]:
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(ROOT / "docs", site / "docs")
    shutil.copy2(ROOT / "README.md", site / "README.md")
    kb = veracity.open(tmp_path_factory.mktemp("kb"))
    report = kb.ingest([site])
    assert "README" in report.added and "docs/serving" in report.added and not report.rejected
    yield kb
    kb.close()


@pytest.mark.parametrize(("question", "pages", "word"), QUESTIONS, ids=[q for q, _, _ in QUESTIONS])
def test_veracity_answers_questions_about_itself(
    own_docs: veracity.LocalKnowledgeBase, question: str, pages: set[str], word: str
) -> None:
    answer = own_docs.ask(question)
    assert answer.status.value in ("answer", "partial"), (question, answer.reasons)
    sources = {citation.citation_id: citation.source_id for citation in answer.citations}
    cited = [
        (claim.text, {sources[i] for i in claim.citation_ids})
        for claim in answer.claims
        if any(sources.get(i) in pages for i in claim.citation_ids)
    ]
    assert cited, f"{question!r}: no claim cites {sorted(pages)}; claims cite {sorted(sources.values())}"
    assert any(word.lower() in text.lower() for text, _ in cited), cited
