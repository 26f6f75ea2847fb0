"""Questions a new user would ask of a plain documentation folder, answered end to end.

    python benchmarks/bench_docs_questions.py DOCS_DIR QUESTIONS.yaml --kb WORKDIR \
        [--split dev|heldout|all] [--out F]

For the two sets in ``benchmarks/docs_questions/`` (their sources are not in this
repository; each file names the repository and commit):

    git clone https://github.com/encode/httpx
    git -C httpx checkout ae1b9f66238f75ced3ced5e4485408435de10768
    python benchmarks/bench_docs_questions.py httpx/docs benchmarks/docs_questions/httpx-en.yaml --kb kb-httpx
    git clone https://github.com/vitejs/docs-cn
    git -C docs-cn checkout e2456079a4d366282206969b7dd819e2139d2035
    mkdir vite-zh && cp -r docs-cn/guide docs-cn/config vite-zh/
    python benchmarks/bench_docs_questions.py vite-zh benchmarks/docs_questions/vite-zh.yaml --kb kb-vite

Those two are reporting sets. ``benchmarks/docs_questions/tune/`` holds four
tuning sets of the same kind (Poetry and MkDocs in English, FastAPI and Ant
Design in Chinese; each file's header says how to get its documents): the
answer model is fitted on them (``python -m veracity.bench.train_answers
--docs-questions benchmarks/docs_questions/tune --docs-root DIR``) and this
script runs on them too (``--split all``: every question of a tuning set may be
read).

The folder is ingested with the defaults a new user gets (no front matter, no
metadata file) into ``WORKDIR`` (reused when it already holds the folder), and
every question of the chosen split is asked as the default public user. The
questions file (see ``benchmarks/docs_questions/``) names, per question, the
files that answer it and short gold strings copied from them. A question's
split is fixed by its id (sha256 parity), so "dev" questions can be read while
working and "heldout" ones are only measured.

Printed per outcome class:
- **correct**: answerable, answered, a claim cites one of the files and holds a
  gold string (case, whitespace and Markdown emphasis ignored), in its text or
  in the heading path of the chunk it cites (what a reader sees beside the
  claim: "server.strictPort" above "设为 true 时若端口已被占用则会直接退出");
  the rows say which;
- **wrong sentence**: answered from a right file without a gold string;
- **wrong file**: answered from other files only;
- **false abstain**: answerable and abstained, with whether a right file was
  among the first four candidates (retrieval vs. the answer step);
- **abstained** / **false answer** for the unanswerable questions.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

import veracity
from veracity.bench.docs_questions import holds_gold, source_file, split_of
from veracity.reader.model import named_reader


def judge(question: dict[str, Any], explanation: Any) -> dict[str, Any]:
    answer = explanation.answer
    status = answer.status.value
    cited = {c.citation_id: c.source_id for c in answer.citations}
    headings = {c.citation_id: " > ".join(c.heading_path) for c in answer.citations}
    files = list(question.get("files") or [])
    gold = list(question.get("answers") or [])
    top4 = [c.source_id for c in explanation.candidates[:4]]
    claims = [
        {
            "text": claim.text,
            "sources": sorted({cited.get(i, "") for i in claim.citation_ids}),
            "headings": sorted({headings.get(i, "") for i in claim.citation_ids}),
        }
        for claim in answer.claims
    ]
    answered = status in ("answer", "partial") and bool(claims)
    by_heading = False
    if not question["answerable"]:
        outcome = "false answer" if answered else "abstained"
    elif not answered:
        outcome = "false abstain"
    else:
        right_claims = [c for c in claims if any(source_file(s, files) for s in c["sources"])]
        if any(holds_gold(c["text"], gold) for c in right_claims):
            outcome = "correct"
        elif any(holds_gold(h, gold) for c in right_claims for h in c["headings"]):
            outcome, by_heading = "correct", True
        elif right_claims:
            outcome = "wrong sentence"
        else:
            outcome = "wrong file"
    return {
        "id": question["id"],
        "question": question["question"],
        "status": status,
        "outcome": outcome,
        "gold_in_heading_only": by_heading,
        "right_file_in_top4": any(source_file(s, files) for s in top4) if files else None,
        "claims": claims,
        "top4": top4,
        "decision": dict(explanation.decision),
    }


def add_folder_arguments(parser: argparse.ArgumentParser) -> None:
    """The documentation folder, its questions, the knowledge base, the split and the embedder."""
    parser.add_argument("docs", type=Path, help="the documentation folder to ingest")
    parser.add_argument("questions", type=Path, help="the questions YAML")
    parser.add_argument("--kb", type=Path, required=True, help="knowledge base directory (reused)")
    parser.add_argument("--split", choices=["dev", "heldout", "all"], default="dev")
    parser.add_argument(
        "--embedder",
        help="dense model of a new knowledge base (use, e5, fake; default use); an existing one keeps it",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_folder_arguments(parser)
    parser.add_argument(
        "--reader",
        default="none",
        help="the reading model that decides answers: none (the logistic answer models), shipped, "
        "or the path of a reader's .npz (its .json model card beside it)",
    )
    parser.add_argument(
        "--reader-role",
        choices=["decide", "choose"],
        default="decide",
        help="decide: the reader also decides answer or abstain; choose: it only chooses the claim",
    )
    parser.add_argument("--out", type=Path, help="write every row as JSON here")
    parser.add_argument("--verbose", action="store_true", help="print every question that is not correct")
    args = parser.parse_args(argv)
    spec = yaml.safe_load(args.questions.read_text(encoding="utf-8"))
    questions = [q for q in spec["questions"] if args.split == "all" or split_of(q["id"]) == args.split]
    with veracity.open(args.kb, embedder=args.embedder) as kb:
        kb.ingest([args.docs])
        kb.engine.reader = named_reader(args.reader, args.reader_role)
        rows = [judge(q, kb.ask(q["question"], explain=True)) for q in questions]
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
    answerable = sum(q["answerable"] for q in questions)
    unanswerable = len(questions) - answerable
    print(f"{args.questions.name} · split {args.split} · {answerable} answerable, {unanswerable} not")
    for outcome in ("correct", "wrong sentence", "wrong file", "false abstain", "abstained", "false answer"):
        print(f"  {outcome:15} {counts.get(outcome, 0)}")
    print(f"  correct through the cited heading only: {sum(r['gold_in_heading_only'] for r in rows)}")
    missed = [r for r in rows if r["outcome"] == "false abstain"]
    retrieved = sum(bool(r["right_file_in_top4"]) for r in missed)
    print(f"  false abstains with a right file in the top 4: {retrieved}")
    if args.verbose:
        for row in rows:
            if row["outcome"] not in ("correct", "abstained"):
                print(f"- {row['id']} [{row['outcome']}] {row['question']}")
                for claim in row["claims"]:
                    print(f"    claim {claim['sources']}: {claim['text'][:160]}")
                print(f"    top4 {row['top4']}")
    if args.out:
        args.out.write_text(
            json.dumps(rows, ensure_ascii=False, indent=1, default=str) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
