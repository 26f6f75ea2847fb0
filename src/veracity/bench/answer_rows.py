"""Collecting the answer model's training rows: every candidate sentence of every tuning question.

For each question (asked as in the answer benchmark, or as a new user asks a
documentation folder), the evidence's candidate sentences with their stored
contexts, the chunk cosine, the claim and its label ("holds a gold answer"),
plus the term statistics and evidence text the decision needs; fitted by
:mod:`veracity.bench.train_answers`.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..index.dense import Embedder
from ..index.embedders import DEFAULT_EMBEDDER, make_embedder
from ..index.snapshot import index_text
from ..kb.local import open_local
from ..model.contracts import Hit, Principal
from ..pipeline.candidates import TermWeights, sentence_contexts, takes_next_sentence
from ..pipeline.engine import Engine, sentence_embedding
from ..text.questions import split_subquestions
from ..text.tokens import tokenize
from .answers import AS_OF, ROLE, TARGET_VERSION, TENANT, build_kb, contains_answer
from .docs_questions import DocsQuestion, holds_gold, load_docs_questions, source_file
from .qa import QAItem, load_qa

TUNING_SETS = (("squad2_dev_half", "dev", "tune"), ("cmrc2018", "trial", "all"))
"""(data-set folder, split, part) of every tuning source."""

DOCS_SOURCE = "docs/"
"""Prefix of a training row's ``source`` when it comes from a docs tuning set."""


def _candidate_rows(kb: Engine, item: QAItem, *, remove_paragraph: bool) -> dict[str, Any] | None:
    """One question's candidates (features, label) and what the decision needs, or ``None``."""
    removed = _chunks_of(kb, lambda source_id: source_id == item.paragraph_id) if remove_paragraph else set()
    answerable = not item.impossible and not remove_paragraph

    def label(hit: Hit, source_id: str, claim: str) -> bool:
        return answerable and contains_answer([claim], item.answers)

    row = _question_row(kb, item.question, Principal.of(TENANT, ROLE), AS_OF, removed=removed, label=label)
    if row is not None:
        row.update(question_id=item.question_id, answerable=answerable, removed=remove_paragraph)
    return row


def _docs_candidate_rows(
    kb: Engine, principal: Principal, as_of: datetime, question: DocsQuestion, *, remove_files: bool
) -> dict[str, Any] | None:
    """A docs question's candidates: a claim is right when its chunk's file states the answer and
    the claim or the chunk's heading path holds a gold string (what the docs benchmark counts)."""
    removed = (
        _chunks_of(kb, lambda source_id: source_file(source_id, question.files)) if remove_files else set()
    )
    answerable = question.answerable and not remove_files

    def label(hit: Hit, source_id: str, claim: str) -> bool:
        if not (answerable and source_file(source_id, question.files)):
            return False
        return holds_gold(claim, question.answers) or holds_gold(
            " ".join(hit.chunk.heading_path), question.answers
        )

    row = _question_row(kb, question.question, principal, as_of, removed=removed, label=label)
    if row is not None:
        row.update(question_id=question.question_id, answerable=answerable, removed=remove_files)
    return row


def _chunks_of(kb: Engine, chosen: Callable[[str], bool]) -> set[str]:
    """The chunks of every document whose source id is ``chosen``."""
    assert kb.snapshot is not None
    return {
        chunk_id
        for document_id, document in kb.snapshot.documents.items()
        if chosen(document.source_id)
        for chunk_id in kb.snapshot.chunks_by_document[document_id]
    }


def _question_row(
    kb: Engine,
    question: str,
    principal: Principal,
    as_of: datetime,
    *,
    removed: set[str],
    label: Callable[[Hit, str, str], bool],
) -> dict[str, Any] | None:
    """Ask ``question`` without the ``removed`` chunks; every candidate sentence with its label."""
    subs = split_subquestions(question)
    if len(subs) != 1:
        return None
    query = kb.query(question, principal, TARGET_VERSION, as_of)
    retrieval = kb.retrieve(query, remove_chunk_ids=removed)
    contexts = sentence_contexts(
        retrieval.packet.hits,
        retrieval.documents,
        question_vector=retrieval.query_vector,
        embed=sentence_embedding(kb.embedder),
    )
    evidence_text = "\n".join(
        " ".join((retrieval.documents[h.chunk.document_id].title, *h.chunk.heading_path, h.chunk.text))
        for h in retrieval.packet.hits
    )
    chunks, frequencies = _without(kb, removed, retrieval.term_weights)
    candidates = []
    for hit, _, end, claim_start, next_end, context in contexts:
        claim_end = (
            next_end if next_end is not None and takes_next_sentence(subs[0], context) else end
        )
        claim = hit.chunk.text[claim_start:claim_end]
        source_id = retrieval.documents[hit.chunk.document_id].source_id
        candidates.append(
            {
                "context": asdict(context),
                "semantic": hit.scores.semantic or 0.0,
                "claim": claim,
                "label": label(hit, source_id, claim),
            }
        )
    return {
        "question": question,
        "weights": {"chunks": chunks, "frequencies": frequencies},
        "evidence_text": evidence_text,
        "candidates": candidates,
    }


def _without(kb: Engine, removed: set[str], weights: TermWeights) -> tuple[int, dict[str, int]]:
    """Term statistics as if the removed chunks were not in the knowledge base at all."""
    frequencies = dict(weights.frequencies)
    if not removed:
        return weights.chunks, frequencies
    assert kb.snapshot is not None
    for chunk_id in removed:
        present = set(tokenize(index_text(kb.snapshot.chunks[chunk_id])))
        for term in frequencies:
            if term in present:
                frequencies[term] -= 1
    return weights.chunks - len(removed), frequencies


def collect(
    datasets: Path,
    rows_path: Path,
    *,
    per_set: int | None,
    seed: int,
    workdir: Path,
    docs_sets: Sequence[tuple[Path, Path]] = (),
    reading_sets: bool = True,
    embedder: Embedder | None = None,
) -> None:
    """Stage 1: ask the tuning questions and write every candidate's features to ``rows_path``.

    ``docs_sets`` are (questions file, documentation folder) pairs of docs tuning sets: each
    folder is ingested with a new user's defaults; every question is asked as the default
    public user, and every answerable one once more without the files that state its answer.
    ``embedder`` defaults to the shipped one (the model records its name).
    """
    embedder = embedder or make_embedder(DEFAULT_EMBEDDER)
    rng = random.Random(seed)
    with rows_path.open("w", encoding="utf-8") as out:
        for name, split, part in TUNING_SETS if reading_sets else ():
            qa = load_qa(datasets / name, split, part)
            kb = build_kb(qa, embedder, workdir / f"{name}-{qa.split}")
            items = qa.sample(per_set, seed)
            for done, item in enumerate(items, start=1):
                plans = [False] + ([True] if not item.impossible and rng.random() < 0.4 else [])
                for remove in plans:
                    row = _candidate_rows(kb, item, remove_paragraph=remove)
                    if row is not None:
                        row["source"] = f"{name}/{qa.split}/{part}"
                        out.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
                if done % 100 == 0:
                    print(f"{name}: {done}/{len(items)}", file=sys.stderr, flush=True)
        as_of = datetime.now(UTC)
        for questions_path, folder in docs_sets:
            spec = load_docs_questions(questions_path)
            with open_local(workdir / f"docs-{questions_path.stem}", embedder=embedder) as local:
                local.ingest([folder])
                principal = local.principal()
                for question in spec.questions:
                    for remove in [False] + ([True] if question.answerable else []):
                        row = _docs_candidate_rows(
                            local.engine, principal, as_of, question, remove_files=remove
                        )
                        if row is not None:
                            row["source"] = f"{DOCS_SOURCE}{questions_path.stem}"
                            out.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
            print(f"{questions_path.stem}: {len(spec.questions)}", file=sys.stderr, flush=True)
