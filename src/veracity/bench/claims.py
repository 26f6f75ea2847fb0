"""How well claim verification tells supported claims from corrupted ones, measured on QA sets.

    python -m veracity.bench.claims --datasets DIR [--sample N] [--out FILE]

No language model runs here: the claims are built from the gold answers of extractive QA sets,
the way a model would write them and the ways a model goes wrong. For each answerable question
(sampled), its answer sentence ``S`` (the sentence of the gold paragraph holding the answer):

- supported: ``sentence`` (``S`` itself, a sanity floor), ``clause`` (the clause of ``S``
  holding the answer, as a model condenses) and ``question_answer`` (the question stated with
  its answer, in the question writer's words: the nearest thing to a model's paraphrase
  without a model), each citing the gold paragraph;
- corrupted: ``swapped_answer`` and ``question_wrong_answer`` (the answer replaced by another
  article's answer that the article does not hold, in ``S`` and in the stated question),
  ``changed_number`` (a number of ``S`` changed), ``flipped_negation``
  (a negation added to ``S`` or taken away), ``wrong_source`` (``S`` citing the paragraph of the
  same article that shares most words with it but lacks the answer).

Every claim is checked by :class:`veracity.pipeline.llm.claims.Verifier` against its cited
paragraph, with up to :data:`CONTEXT_PARAGRAPHS` paragraphs of the article as the other blocks
(the IDF context), and the index's default embedder for the dense check. The value checks
(numbers, codes, names, negation) have no threshold; the term-coverage and dense-similarity
thresholds are swept on the *tuning* splits only (SQuAD 2.0 half-dev part ``tune``, CMRC 2018
``trial``) for the best :func:`objective`: supported claims kept (the mean over the supported
kinds) and corruptions caught (the mean over the corrupted kinds), a caught corruption weighing
:data:`MISS_COST` times a kept claim; the *reporting* splits (SQuAD part ``report``, CMRC
``dev``) are scored with the tuned pair and with the shipped pair
(:data:`~veracity.pipeline.llm.claims.MIN_COVERAGE`,
:data:`~veracity.pipeline.llm.claims.MIN_SIMILARITY`).

Not measured here: the instruction and uncovered-sub-question checks (the injection detector has
its own benchmark), and paraphrases a real model writes (they need an endpoint; see the README).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Final

from ..index.dense import Embedder
from ..pipeline.candidates import Embed, TermWeights
from ..pipeline.engine import sentence_embedding
from ..pipeline.llm.claims import MIN_COVERAGE, MIN_SIMILARITY, DropReason, Verifier
from ..pipeline.llm.context import Block
from ..reader.choice import ChoiceModel
from ..text.scripts import has_han
from ..text.sentences import split_sentences
from ..text.tokens import tokenize
from ..text.values import NEGATION_EN, NEGATION_ZH, fold, negates
from .qa import QAItem, QASet, load_qa

TUNING: Final = (("squad2_dev_half", "dev", "tune"), ("cmrc2018", "trial", "all"))
REPORTING: Final = (("squad2_dev_half", "dev", "report"), ("cmrc2018", "dev", "all"))
SUPPORTED: Final = ("sentence", "clause", "question_answer")
CORRUPTED: Final = (
    "swapped_answer", "question_wrong_answer", "changed_number", "flipped_negation", "wrong_source",
)  # fmt: skip
CONTEXT_PARAGRAPHS: Final = 5
COVERAGE_GRID: Final = tuple(round(0.3 + 0.05 * i, 2) for i in range(13))
SIMILARITY_GRID: Final = (0.0, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7)
READER_GRID: Final = (-6.0, -5.0, -4.0, -3.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0)
"""Thresholds on the sentence reader's logit swept with ``--reader`` (its "no answer" is 0)."""
MISS_COST: Final = 2.0
"""How much worse a corrupted claim shown is than a supported claim dropped (see the module
docstring): a dropped claim leaves the extractive floor, right but less fluent; a missed one puts
a false sentence before the reader."""
VALUE_REASONS: Final = frozenset({DropReason.NUMBER, DropReason.CODE, DropReason.NAME, DropReason.NEGATION})
_EN_VERB = re.compile(r"\b(is|was|are|were|has|had|can|could|will|would|does|did)\b")
_ZH_VERB = re.compile(r"是|能|会|可以|有")
_ZH_ASKING = re.compile(r"什么|哪一?[个位种年天里些]?|谁|多少|几[个年月天次]?")


@dataclass(frozen=True, slots=True)
class ClaimRow:
    """One built claim and what the verifier measured (thresholds not yet applied)."""

    question_id: str
    kind: str
    value_reason: str | None
    coverage: float
    similarity: float | None
    reader: float | None = None
    """The sentence reader's best logit for the claim, read as a question, over the cited
    paragraph's sentences (``None``: not measured)."""

    @property
    def supported(self) -> bool:
        """Whether the claim was built to be supported by what it cites."""
        return self.kind in SUPPORTED

    def verified(self, min_coverage: float, min_similarity: float, min_reader: float | None = None) -> bool:
        """The verifier's verdict at these thresholds (``min_reader``: the reader's too)."""
        return (
            self.value_reason is None
            and self.coverage >= min_coverage
            and (self.similarity is None or self.similarity >= min_similarity)
            and (min_reader is None or self.reader is None or self.reader >= min_reader)
        )


def answer_sentence(paragraph: str, answer: str) -> str | None:
    """The first sentence of ``paragraph`` holding ``answer``."""
    for start, end in split_sentences(paragraph):
        if answer in paragraph[start:end]:
            return paragraph[start:end].strip()
    return None


def clause_of(sentence: str, answer: str) -> str | None:
    """The clause of ``sentence`` holding ``answer`` (with the one before it when it is short)."""
    pieces = [p for p in re.split(r"(?<=[,;:，；：、])", sentence) if p.strip()]
    index = next((i for i, p in enumerate(pieces) if answer in p), None)
    if index is None:
        return None
    clause = pieces[index]
    if len(tokenize(clause)) < 5 and index > 0:
        clause = pieces[index - 1] + clause
    clause = clause.strip().rstrip(",;:，；：、。.!?！？").strip()
    if len(tokenize(clause)) < 3 or clause == sentence.rstrip("。.!?！？").strip():
        return None
    return clause + ("。" if has_han(clause) else ".")


def question_answer(question: str, answer: str) -> str:
    """The question stated with its answer: a Chinese question word replaced by the answer, or
    ``question: answer.``; the crowd wrote the question in its own words, so the claim is a
    paraphrase of the paragraph rather than a copy."""
    stem = question.strip().rstrip("?？").strip()
    if has_han(stem):
        stem = stem.removesuffix("呢").removesuffix("吗")
        if _ZH_ASKING.search(stem):
            return _ZH_ASKING.sub(answer, stem, count=1) + "。"
        return f"{stem}：{answer}。"
    return f"{stem}: {answer}."


def changed_number(sentence: str, paragraph: str) -> str | None:
    """``sentence`` with its first number changed to one the paragraph does not hold."""
    match = re.search(r"\d+", sentence)
    if match is None:
        return None
    value = int(match.group(0))
    for step in (1, 2, 3, 7):
        new = str(value + step)
        if new not in paragraph:
            return sentence[: match.start()] + new + sentence[match.end() :]
    return None


def flipped_negation(sentence: str) -> str | None:
    """``sentence`` with a negation taken away (when it negates) or added after its first verb."""
    chinese = has_han(sentence)
    if negates(sentence):
        pattern = NEGATION_ZH if chinese else NEGATION_EN
        flipped = pattern.sub("", sentence, count=1)
        flipped = " ".join(flipped.split()) if not chinese else flipped
        return flipped if not negates(flipped) else None
    if chinese:
        match = _ZH_VERB.search(sentence)
        if match is None:
            return None
        word = "没" if match.group(0) == "有" else "不"
        return sentence[: match.start()] + word + sentence[match.start() :]
    match = _EN_VERB.search(sentence)
    return None if match is None else sentence[: match.end()] + " not" + sentence[match.end() :]


def _block(number: int, paragraph: tuple[str, str, str]) -> Block:
    paragraph_id, title, text = paragraph
    return Block(number, paragraph_id, text, title, paragraph_id, "1", "official", "", 1.0, 0)


def build_claims(
    qa: QASet, items: Sequence[QAItem], seed: int
) -> Iterator[tuple[QAItem, str, str, str]]:
    """``(item, kind, claim text, cited paragraph id)`` for each claim built (see the module docstring)."""
    paragraphs = {p[0]: p for p in qa.paragraphs}
    by_title: dict[str, list[str]] = {}
    for paragraph_id, title, _ in qa.paragraphs:
        by_title.setdefault(title, []).append(paragraph_id)
    pool = sorted({(paragraphs[i.paragraph_id][1], i.answers[0]) for i in items if i.answers})
    for item in items:
        if item.impossible or not item.answers or item.paragraph_id not in paragraphs:
            continue
        _, title, text = paragraphs[item.paragraph_id]
        answer = item.answers[0]
        sentence = answer_sentence(text, answer)
        if sentence is None:
            continue
        yield item, "sentence", sentence, item.paragraph_id
        clause = clause_of(sentence, answer)
        if clause is not None:
            yield item, "clause", clause, item.paragraph_id
        article = fold(" ".join(paragraphs[p][2] for p in by_title[title]))
        digits = bool(re.search(r"\d", answer))
        others = [
            a
            for t, a in pool
            if t != title and bool(re.search(r"\d", a)) == digits and fold(a) not in article
        ]
        yield item, "question_answer", question_answer(item.question, answer), item.paragraph_id
        if others:  # another article's answer, drawn per question so that no one answer dominates
            other = random.Random(f"{seed}:{item.question_id}").choice(others)
            yield item, "swapped_answer", sentence.replace(answer, other, 1), item.paragraph_id
            yield item, "question_wrong_answer", question_answer(item.question, other), item.paragraph_id
        number = changed_number(sentence, text)
        if number is not None:
            yield item, "changed_number", number, item.paragraph_id
        flipped = flipped_negation(sentence)
        if flipped is not None:
            yield item, "flipped_negation", flipped, item.paragraph_id
        words = frozenset(tokenize(sentence))
        siblings = [p for p in by_title[title] if p != item.paragraph_id and answer not in paragraphs[p][2]]
        if siblings:
            best = max(siblings, key=lambda p: (len(words & frozenset(tokenize(paragraphs[p][2]))), p))
            yield item, "wrong_source", sentence, best


def measure(
    qa: QASet, items: Sequence[QAItem], embed: Embed | None, seed: int = 0, chooser: ChoiceModel | None = None
) -> list[ClaimRow]:
    """Every built claim checked against its cited paragraph, thresholds off; with ``chooser`` also
    its best logit for the claim over the cited paragraph's sentences (:func:`reader_support`)."""
    paragraphs = {p[0]: p for p in qa.paragraphs}
    rows = []
    for item, kind, text, cited in build_claims(qa, items, seed):
        title = paragraphs[cited][1]
        same_article = [p for p in qa.paragraphs if p[1] == title and p[0] != cited]
        context = [paragraphs[cited], *same_article[: CONTEXT_PARAGRAPHS - 1]]
        verifier = Verifier(
            blocks={n: _block(n, p) for n, p in enumerate(context, start=1)},
            subquestions=(),
            covered=frozenset(),
            question_weights=TermWeights(chunks=0, frequencies={}),
            embed=embed,
            min_coverage=0.0,
            min_similarity=-2.0,
        )
        reason, coverage, similarity = verifier.support(text, (1,))
        value_reason = reason.value if reason in VALUE_REASONS else None
        read = reader_support(chooser, text, paragraphs[cited]) if chooser is not None else None
        rows.append(ClaimRow(item.question_id, kind, value_reason, coverage, similarity, read))
    return rows


def reader_support(chooser: ChoiceModel, claim: str, paragraph: tuple[str, str, str]) -> float | None:
    """The sentence reader's best logit for ``claim`` read as a question over ``paragraph``'s
    sentences, each with the title as its subject; ``None`` for a paragraph without sentences."""
    _, title, text = paragraph
    sentences = [text[start:end].strip() for start, end in split_sentences(text)]
    logits = chooser.scores(claim, [(title, sentence) for sentence in sentences if sentence])
    return max(logits) if logits else None


def scores(
    rows: Sequence[ClaimRow], min_coverage: float, min_similarity: float, min_reader: float | None = None
) -> dict[str, Any]:
    """Per kind: claims and the share verified; supported kept, corruptions caught (macro over
    kinds), balanced accuracy, and the precision of "verified" on this mix; ``None`` when undefined."""
    per_kind: dict[str, dict[str, Any]] = {}
    for kind in (*SUPPORTED, *CORRUPTED):
        chosen = [r for r in rows if r.kind == kind]
        verified = [r.verified(min_coverage, min_similarity, min_reader) for r in chosen]
        reasons: dict[str, int] = {}
        for row, ok in zip(chosen, verified, strict=True):
            if not ok:
                why = row.value_reason or (
                    "low_term_coverage" if row.coverage < min_coverage
                    else "low_similarity" if not row.verified(min_coverage, min_similarity)
                    else "low_reader"
                )  # fmt: skip
                reasons[why] = reasons.get(why, 0) + 1
        per_kind[kind] = {
            "claims": len(chosen),
            "verified": sum(verified) / len(chosen) if chosen else None,
            "reasons": dict(sorted(reasons.items())),
        }
    kept = [per_kind[k]["verified"] for k in SUPPORTED if per_kind[k]["verified"] is not None]
    caught = [1 - per_kind[k]["verified"] for k in CORRUPTED if per_kind[k]["verified"] is not None]
    supported_kept = sum(kept) / len(kept) if kept else None
    corrupted_caught = sum(caught) / len(caught) if caught else None
    balanced = (
        (supported_kept + corrupted_caught) / 2
        if supported_kept is not None and corrupted_caught is not None
        else None
    )
    verified_rows = [r for r in rows if r.verified(min_coverage, min_similarity, min_reader)]
    precision = sum(r.supported for r in verified_rows) / len(verified_rows) if verified_rows else None
    recall_rows = [r for r in rows if r.supported]
    recall = (
        sum(r.verified(min_coverage, min_similarity, min_reader) for r in recall_rows) / len(recall_rows)
        if recall_rows
        else None
    )
    return {
        "thresholds": {"min_coverage": min_coverage, "min_similarity": min_similarity}
        | ({"min_reader": min_reader} if min_reader is not None else {}),
        "kinds": per_kind,
        "supported_kept": supported_kept,
        "corrupted_caught": corrupted_caught,
        "balanced_accuracy": balanced,
        "precision": precision,
        "recall": recall,
    }


def objective(result: Mapping[str, Any], miss_cost: float = MISS_COST) -> float:
    """Supported kept and corruptions caught, a caught corruption weighing ``miss_cost`` times a
    kept claim; 0 when either is undefined."""
    kept, caught = result["supported_kept"], result["corrupted_caught"]
    if kept is None or caught is None:
        return 0.0
    return float((kept + miss_cost * caught) / (1 + miss_cost))


def _best(
    rows: Sequence[ClaimRow], miss_cost: float, readers: Sequence[float | None]
) -> tuple[float, float, float | None]:
    """The thresholds of best :func:`objective` on ``rows`` over the grids (ties: the stricter)."""
    best: tuple[float, float, float, float] | None = None
    for coverage in COVERAGE_GRID:
        for similarity in SIMILARITY_GRID:
            for index, reader in enumerate(readers):  # readers ascend: a later one is stricter
                value = objective(scores(rows, coverage, similarity, reader), miss_cost)
                candidate = (round(value, 9), coverage, similarity, index)
                if best is None or candidate > best:
                    best = candidate
    assert best is not None
    return best[1], best[2], readers[int(best[3])]


def tune(rows: Sequence[ClaimRow], miss_cost: float = MISS_COST) -> tuple[float, float]:
    """The thresholds of best :func:`objective` on ``rows`` (ties: the stricter pair)."""
    coverage, similarity, _ = _best(rows, miss_cost, (None,))
    return coverage, similarity


def tune_reader(rows: Sequence[ClaimRow], miss_cost: float = MISS_COST) -> tuple[float, float, float]:
    """The thresholds of best :func:`objective` with the reader's among them (ties: the stricter)."""
    coverage, similarity, reader = _best(rows, miss_cost, READER_GRID)
    assert reader is not None
    return coverage, similarity, reader


def run(
    datasets: Path,
    embedder: Embedder | None,
    sample: int | None,
    seed: int,
    *,
    tuning_sets: Sequence[tuple[str, str, str]] = TUNING,
    reporting_sets: Sequence[tuple[str, str, str]] = REPORTING,
    rows_out: Path | None = None,
    chooser: ChoiceModel | None = None,
) -> dict[str, Any]:
    """Tune on the tuning splits, score the reporting splits (see the module docstring); each set
    is ``(folder under datasets, split, part)``; ``rows_out`` gets every claim's measures (JSON
    lines), to sweep again without embedding again. With ``chooser`` (the sentence reader) the
    three thresholds are also tuned together and the reporting splits scored with them
    (``tuned+reader``)."""
    embed = sentence_embedding(embedder) if embedder is not None else None

    def collect(sets: Sequence[tuple[str, str, str]]) -> dict[str, list[ClaimRow]]:
        found = {}
        for name, split, part in sets:
            qa = load_qa(datasets / name, split, part)
            answerable = replace(qa, items=tuple(i for i in qa.items if i.answers))
            chosen = answerable.sample(sample, seed)
            found[f"{name}/{split}/{part}"] = measure(qa, chosen, embed, seed, chooser)
        return found

    tuning = collect(tuning_sets)
    coverage, similarity = tune([r for rows in tuning.values() for r in rows])
    with_reader = tune_reader([r for rows in tuning.values() for r in rows]) if chooser is not None else None
    reporting = collect(reporting_sets)
    if rows_out is not None:
        with rows_out.open("w", encoding="utf-8") as out:
            for name, rows in (*tuning.items(), *reporting.items()):
                for row in rows:
                    line = json.dumps({"set": name, **asdict(row)}, ensure_ascii=False, sort_keys=True)
                    out.write(line + "\n")
    report: dict[str, Any] = {
        "embedder": embedder.model_id if embedder is not None else None,
        "sample": sample,
        "seed": seed,
        "tuned": {"min_coverage": coverage, "min_similarity": similarity, "on": sorted(tuning)},
        "shipped": {"min_coverage": MIN_COVERAGE, "min_similarity": MIN_SIMILARITY},
        "miss_cost": MISS_COST,
        "tuning": {name: scores(rows, coverage, similarity) for name, rows in tuning.items()},
        "reporting": {
            name: {
                "tuned": scores(rows, coverage, similarity),
                "shipped": scores(rows, MIN_COVERAGE, MIN_SIMILARITY),
            }
            for name, rows in reporting.items()
        },
    }
    if with_reader is not None:
        report["reader"] = {"model": getattr(chooser, "version", None), "grid": list(READER_GRID)}
        names = ("min_coverage", "min_similarity", "min_reader")
        report["tuned_with_reader"] = dict(zip(names, with_reader, strict=True))
        for name, rows in tuning.items():
            report["tuning"][name + " +reader"] = scores(rows, *with_reader)
        for name, rows in reporting.items():
            report["reporting"][name]["tuned+reader"] = scores(rows, *with_reader)
    return report


def table(report: dict[str, Any]) -> str:
    """The reporting splits as a markdown table: each kind's verified share, then the totals."""

    def cell(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    kinds = (*SUPPORTED, *CORRUPTED)
    head = ["split", "thresholds", *(f"{k} verified" for k in kinds), "kept", "caught", "precision"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, both in report["reporting"].items():
        for label, result in both.items():
            t = result["thresholds"]
            cells = [
                name, f"{label} " + "/".join(str(v) for v in t.values()),
                *(f"{cell(r['verified'])} (n={r['claims']})" for r in (result["kinds"][k] for k in kinds)),
                cell(result["supported_kept"]), cell(result["corrupted_caught"]), cell(result["precision"]),
            ]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--datasets", type=Path, required=True, help="shared/datasets")
    parser.add_argument("--sample", type=int, default=200, help="answerable questions per split")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--embedder", choices=["use", "e5", "fake", "none"], default="use")
    parser.add_argument("--out", type=Path, help="write the JSON report here")
    parser.add_argument("--rows", type=Path, help="write every claim's measures here (JSON lines)")
    parser.add_argument(
        "--reader", default="none",
        help="also check each claim with a sentence reader ('shipped', or a chooser's .npz): its threshold "
        "is tuned with the others and the reporting splits scored with it (tuned+reader)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    from ..index.embedders import make_embedder
    from ..reader.choice import named_chooser

    embedder = None if args.embedder == "none" else make_embedder(args.embedder)
    chooser = named_chooser(args.reader)
    report = run(args.datasets, embedder, args.sample, args.seed, rows_out=args.rows, chooser=chooser)
    if args.out is not None:
        args.out.write_text(json.dumps(report, ensure_ascii=False, indent=2, sort_keys=True) + "\n", "utf-8")
    tuned = report["tuned"]
    print(f"tuned on {', '.join(tuned['on'])}: min_coverage {tuned['min_coverage']}, "
          f"min_similarity {tuned['min_similarity']}")  # fmt: skip
    if "tuned_with_reader" in report:
        tuned_reader = report["tuned_with_reader"]
        print("tuned with the reader: " + ", ".join(f"{k} {v}" for k, v in tuned_reader.items()))
        for name, result in report["tuning"].items():
            print(f"  tuning {name}: objective {objective(result):.4f}, kept {result['supported_kept']:.3f}, "
                  f"caught {result['corrupted_caught']:.3f}")  # fmt: skip
    print(table(report), end="")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
