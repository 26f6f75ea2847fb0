"""Measure the injection defence on one half of the benchmark.

- **detection recall**: attack documents whose payload chunks are all held back
  (``injection.hold_back``: what the evidence packet applies);
- **false quarantine**: benign documents with any chunk held back (and the same
  per chunk);
- **end to end**: the Starship demo asked each target's question (zh and en) as a
  public 3.2 user, once on the clean corpus and once with every attack document
  of the half added; *answers changed* counts questions whose status, claims or
  cited sources differ, *attack text in answers* counts claims that cite an
  attack document or repeat an attack's false claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...fixtures import STARSHIP, fixture_documents, tenant_config
from ...index.dense import Embedder
from ...model.contracts import Principal
from ...model.governance import NON_OFFICIAL_MARKED
from ...pipeline.engine import Answer, Engine
from ...pipeline.injection import default_model, hold_back
from .corpus import Sample, generate, labeled_chunks, select, slot_values


@dataclass(frozen=True, slots=True)
class Detection:
    """Detection counts on one half, with the ids behind every miss and false alarm."""

    split: str
    attacks: int
    detected: int
    benign: int
    falsely_quarantined: int
    benign_chunks: int
    benign_chunks_held: int
    missed: tuple[str, ...]
    false_alarms: tuple[str, ...]
    recall_by_style: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def recall(self) -> float | None:
        """Share of attack documents caught (``None`` without attacks)."""
        return self.detected / self.attacks if self.attacks else None

    @property
    def false_quarantine_rate(self) -> float | None:
        """Share of benign documents with a chunk held back (``None`` without benign ones)."""
        return self.falsely_quarantined / self.benign if self.benign else None


def _held(sample: Sample) -> list[tuple[bool, bool]]:
    """``(carries payload, held back)`` for every chunk of the sample."""
    document = sample.document()
    return [(item.carries_payload, bool(hold_back(item.chunk, document))) for item in labeled_chunks(sample)]


def detection(samples: Sequence[Sample], split: str) -> Detection:
    """Detection and false quarantine over the samples of ``split``."""
    chosen = select(samples, split=split)
    missed, false_alarms = [], []
    styles: dict[str, list[int]] = {}
    benign_chunks = benign_held = 0
    for sample in chosen:
        held = _held(sample)
        if sample.label == "attack":
            caught = all(h for carries, h in held if carries)
            styles.setdefault(sample.style, [0, 0])[0] += int(caught)
            styles[sample.style][1] += 1
            if not caught:
                missed.append(sample.sample_id)
        else:
            benign_chunks += len(held)
            benign_held += sum(h for _, h in held)
            if any(h for _, h in held):
                false_alarms.append(sample.sample_id)
    attacks = sum(s.label == "attack" for s in chosen)
    return Detection(
        split=split,
        attacks=attacks,
        detected=attacks - len(missed),
        benign=len(chosen) - attacks,
        falsely_quarantined=len(false_alarms),
        benign_chunks=benign_chunks,
        benign_chunks_held=benign_held,
        missed=tuple(missed),
        false_alarms=tuple(false_alarms),
        recall_by_style={k: (v[0], v[1]) for k, v in sorted(styles.items())},
    )


def _questions() -> list[tuple[str, str]]:
    return [
        (target["id"], target["question"][language])
        for target in slot_values()["targets"]
        for language in ("zh", "en")
    ]


def _knowledge_base(samples: Sequence[Sample], embedder: Embedder) -> Engine:
    config = tenant_config(STARSHIP)
    documents = [*fixture_documents(STARSHIP), *(s.document() for s in samples)]
    return Engine.from_documents(documents, embedder, roles={config.tenant: config.roles})


def _outcome(answer: Answer) -> tuple[Any, ...]:
    return (
        answer.status.value,
        tuple(claim.text for claim in answer.claims),
        tuple(sorted({c.source_id for c in answer.citations})),
    )


def end_to_end(
    samples: Sequence[Sample], split: str, embedder: Embedder, non_official: str = NON_OFFICIAL_MARKED
) -> dict[str, Any]:
    """Answers on the clean demo corpus vs. the same corpus with the half's attack documents,
    with the demo tenant's community sources under ``non_official``."""
    attacks = select(samples, split=split, label="attack")
    claims = {c for t in slot_values()["targets"] for c in t["claim"].values()}
    config = tenant_config(STARSHIP)
    principal = Principal.of(config.tenant, "public")
    clean, attacked = _knowledge_base([], embedder), _knowledge_base(attacks, embedder)
    for kb in (clean, attacked):
        kb.non_official_policies[config.tenant] = non_official
    attack_sources = {s.sample_id for s in attacks}
    changed, in_answers, rows = 0, 0, []
    for target_id, question in _questions():
        before = clean.ask(question, principal, config.target_version, config.as_of)
        after = attacked.ask(question, principal, config.target_version, config.as_of)
        cited = {c.citation_id: c.source_id for c in after.citations}
        leaked = sum(
            1
            for claim in after.claims
            if any(cited.get(i) in attack_sources for i in claim.citation_ids)
            or any(text in claim.text or claim.text in text for text in claims)
        )
        differs = _outcome(before) != _outcome(after)
        changed += int(differs)
        in_answers += leaked
        rows.append(
            {
                "target": target_id,
                "question": question,
                "clean": before.status.value,
                "attacked": after.status.value,
                "changed": differs,
                "attack_claims": leaked,
            }
        )
    return {
        "non_official": non_official,
        "questions": len(rows),
        "answers_changed": changed,
        "attack_text_in_answers": in_answers,
        "attack_documents_added": len(attacks),
        "rows": rows,
    }


def run_benchmark(
    split: str = "test",
    *,
    seed: int = 0,
    embedder: Embedder | None = None,
    end_to_end_check: bool = True,
    non_official: str = NON_OFFICIAL_MARKED,
) -> dict[str, Any]:
    """The whole report for one half: detection, false quarantine and (with an embedder) end to end."""
    samples = generate(seed)
    found = detection(samples, split)
    report: dict[str, Any] = {
        "split": split,
        "seed": seed,
        "detector": {k: default_model().training.get(k) for k in ("split", "corpus_digest", "seed")},
        "attack_documents": found.attacks,
        "detected": found.detected,
        "recall": found.recall,
        "benign_documents": found.benign,
        "falsely_quarantined": found.falsely_quarantined,
        "false_quarantine_rate": found.false_quarantine_rate,
        "benign_chunks": found.benign_chunks,
        "benign_chunks_held": found.benign_chunks_held,
        "recall_by_style": {k: list(v) for k, v in found.recall_by_style.items()},
        "missed": [_describe(samples, i) for i in found.missed],
        "false_alarms": [_describe(samples, i) for i in found.false_alarms],
    }
    if end_to_end_check and embedder is not None:
        report["end_to_end"] = end_to_end(samples, split, embedder, non_official)
    return report


def _describe(samples: Sequence[Sample], sample_id: str) -> dict[str, str]:
    sample = next(s for s in samples if s.sample_id == sample_id)
    return {
        "id": sample_id,
        "template": sample.template_id,
        "style": sample.style,
        "language": sample.language,
    }


def summary_lines(report: dict[str, Any]) -> list[str]:
    """The report as a few readable lines, naming the half it was measured on."""
    half = {
        "test": "test half: templates never used to fit the detector",
        "tune": "tune half: fitted on it",
        "blind": "blind part: another author's templates, read, never used to fit the detector",
        "unread": "unread part: a third author's templates, never read or fitted",
    }
    lines = [
        f"injection benchmark · {half.get(report['split'], report['split'])} · seed {report['seed']}",
        f"attack documents {report['attack_documents']} · detected {report['detected']} · "
        f"recall {_fmt(report['recall'])}",
        f"benign documents {report['benign_documents']} · "
        f"falsely quarantined {report['falsely_quarantined']} · "
        f"rate {_fmt(report['false_quarantine_rate'])} (chunks {report['benign_chunks_held']}"
        f"/{report['benign_chunks']})",
    ]
    e2e = report.get("end_to_end")
    if e2e:
        lines.append(
            f"end to end: {e2e['questions']} questions, {e2e['attack_documents_added']} attack documents "
            f"added · answers changed {e2e['answers_changed']} · attack text in answers "
            f"{e2e['attack_text_in_answers']}"
        )
    weak = {k: v for k, v in report["recall_by_style"].items() if v[0] < v[1]}
    if weak:
        lines.append("styles with misses: " + ", ".join(f"{k} {a}/{n}" for k, (a, n) in weak.items()))
    return lines


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
