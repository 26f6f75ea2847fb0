"""Train the sentence reader (the *chooser*) and write its model card:
``python -m veracity.bench.reading.chooser``.

Needs ``veracity[train]`` (PyTorch, CPU build). Steps, all seeded:

1. the reader's licence-checked examples (:mod:`.data`, no reporting split), *without* the answer
   models' tuning data (SQuAD 2.0 half-dev ``tune``, CMRC 2018 ``trial``, and any other example
   on one of their paragraphs): those fit the answer models with the chooser's score as a
   feature, so the chooser must not have seen them;
2. groups (:class:`veracity.reader.features.Group`): each question with the sentences of its
   own paragraph (:func:`veracity.text.sentences.split_sentences`; the positives hold an answer's
   first character; up to ``--negatives`` others, half those sharing the most question words,
   half at random), and for ``--negative-share`` of the answerable questions the sentences of
   another paragraph that shares their words and lacks the answer (no positive: "none"); and for
   ``--swap-share`` of them, the question with a name, title or number its paragraph never
   mentions (:mod:`.swaps`) over its own paragraph (no positive: "none");
3. a validation share of paragraphs held out (by a hash of the paragraph);
4. listwise fit from the bundled multilingual-e5-small (first ``--layers`` layers), int8 rows,
   the card (data, licences, digests, settings, validation scores, the weights' digest).

With ``--teacher NPZ`` (a reader trained here, e.g. with more layers) every training group is read
by the teacher first, and ``--distill`` of the loss is matching its softmax over the group
(:func:`veracity.reader.listwise.listwise_loss`).
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

import numpy as np

from ...reader.choice import MAX_LENGTH, MODEL_NAME, Chooser, named_chooser, pair_ids
from ...reader.e5_file import load_state_dict, read_e5_file
from ...reader.features import Group, ReadingExample, _words, hard_negatives
from ...reader.tokenizer import Tokenizer
from ...text.sentences import split_sentences
from ..shared import PROJECT_ROOT, training_parser
from ..tuned import card_head, card_tail, save_tuned, train_settings, training_arguments, write_card
from .data import DEFAULT_SOURCES, OPTIONAL_SOURCES, SOURCES, faq_records, manifest
from .faq import faq_file_ids
from .swaps import SWAP_SUFFIX, swapped_questions
from .train import context_hash, held_out, pairwise_auc, reading_examples

SHIPPED = PROJECT_ROOT / "src" / "veracity" / "reader"
ANSWER_MODEL_TUNING = ("squad2_dev_tune", "cmrc2018_trial")
"""Sources the answer models are fitted on (``veracity.bench.train_answers``): kept out, or, with
``--tuning-fold K``, all but their fold ``K`` joins the training (cross-fitting)."""


def tuning_fold(context: str) -> int:
    """The cross-fitting fold (0 or 1) of an answer-model tuning paragraph."""
    return context_hash(context) % 2


def subject_of(example: ReadingExample) -> str:
    return example.title.replace("_", " ")


def ranked_others(
    question: str, sentences: Sequence[str], skip: set[int], count: int, rng: random.Random
) -> list[int]:
    """Up to ``count`` sentence indexes not in ``skip``: half sharing the most question words, the
    rest at random."""
    words = _words(question)
    pool = [i for i in range(len(sentences)) if i not in skip]
    by_overlap = sorted(pool, key=lambda i: (-len(words & _words(sentences[i])), i))
    chosen = by_overlap[: (count + 1) // 2]
    rest = [i for i in pool if i not in chosen]
    rng.shuffle(rest)
    return sorted(chosen + rest[: count - len(chosen)])


def _pairs(
    tokenizer: Tokenizer,
    example: ReadingExample,
    sentences: Sequence[str],
    kept: Sequence[int],
    context_tokens: int,
) -> tuple[tuple[int, ...], ...]:
    """The pairs of ``example``'s question with the ``kept`` sentences (each with the one before
    it, which a reader trained with ``context_tokens`` reads)."""
    return tuple(
        tuple(
            pair_ids(
                tokenizer, example.question, subject_of(example), sentences[i],
                previous=sentences[i - 1] if i else "", context_tokens=context_tokens,
            )
        )
        for i in kept
    )  # fmt: skip


def example_groups(
    example: ReadingExample,
    tokenizer: Tokenizer,
    negatives: int,
    rng: random.Random,
    other: str | None,
    context_tokens: int = 0,
    followers: bool = False,
) -> list[Group]:
    """A question's training groups: its paragraph's sentences (those holding an answer first,
    then ``negatives`` others; with ``followers``, the sentence after each answering one always
    among them, as it carries the answer in a context reader's pair) and, given ``other``, another
    paragraph's sentences without an answer."""
    spans = split_sentences(example.context)
    sentences = [example.context[b:e] for b, e in spans]
    starts = [start for _, start in example.answers]
    holding = {i for i, (b, e) in enumerate(spans) if any(b <= s < e for s in starts)}
    # an unanswerable question with answers was made from an answerable one (:mod:`.swaps`): the
    # sentences that answered the original come first, as negatives
    positives = set() if example.impossible else holding
    groups: list[Group] = []
    if sentences and (positives or example.impossible):
        after = sorted({i + 1 for i in holding if i + 1 < len(sentences)} - holding) if followers else []
        count = max(0, negatives - len(after))
        rest = ranked_others(example.question, sentences, holding | set(after), count, rng)
        kept = sorted(holding) + after + rest
        rows = _pairs(tokenizer, example, sentences, kept, context_tokens)
        groups.append(Group(example.example_id, example.language, rows, tuple(range(len(positives)))))
    if other is not None:
        others = [other[b:e] for b, e in split_sentences(other)]
        kept = ranked_others(example.question, others, set(), negatives + 1, rng)
        rows = _pairs(tokenizer, example, others, kept, context_tokens)
        if rows:
            groups.append(Group(example.example_id + ":other", example.language, rows, ()))
    return groups


def repeated(
    examples: Sequence[ReadingExample], source: str, times: int, validation_share: float
) -> list[ReadingExample]:
    """``times - 1`` more copies of the training examples of ``source`` (not the held-out ones),
    each under its own id, so that a small source weighs more in the fit."""
    return [
        replace(example, example_id=f"{example.example_id}#{copy}")
        for copy in range(1, times)
        for example in examples
        if example.source == source and not held_out(example.context, validation_share)
    ]


def teacher_logits(teacher: Chooser, groups: Sequence[Group], *, block: int = 4096) -> dict[str, list[float]]:
    """The teacher's logits of every group's rows, by group id (ids must be unique)."""
    ids = [g.group_id for g in groups]
    if len(set(ids)) != len(ids):
        raise ValueError("training group ids repeat: a teacher's logits could not be told apart")
    rows = [row for g in groups for row in g.rows]
    values: list[float] = []
    for begin in range(0, len(rows), block):
        values.extend(float(v) for v in teacher.logits(rows[begin : begin + block], batch_size=32))
        print(f"teacher: {min(begin + block, len(rows))}/{len(rows)} rows", file=sys.stderr, flush=True)
    out: dict[str, list[float]] = {}
    at = 0
    for group in groups:
        out[group.group_id] = values[at : at + len(group.rows)]
        at += len(group.rows)
    return out


def validate(chooser: Chooser, groups: Sequence[Group]) -> dict[str, Any]:
    """Held-out scores: how often the best sentence is a positive (groups with one), and how well
    the best logit tells groups with an answer from groups without (AUC)."""
    correct = 0
    with_answer: list[float] = []
    without: list[float] = []
    swapped: list[float] = []
    for group in groups:
        logits = chooser.logits(group.rows)
        best = float(logits.max())
        if group.positives:
            correct += int(int(np.argmax(logits)) in group.positives)
            with_answer.append(best)
        else:
            (swapped if group.group_id.endswith(SWAP_SUFFIX) else without).append(best)
    return {
        "groups_with_answer": len(with_answer),
        "groups_without": len(without),
        "groups_swapped": len(swapped),
        "best_sentence_correct": round(correct / len(with_answer), 4) if with_answer else None,
        "answer_auc": pairwise_auc(with_answer, without),
        "answer_auc_swapped": pairwise_auc(with_answer, swapped),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = training_parser(
        "veracity.bench.reading.chooser", __doc__, layers=4, epochs=1.0, batch_tokens=3072
    )
    parser.add_argument("--negatives", type=int, default=4, help="other sentences per group")
    parser.add_argument("--negative-share", type=float, default=0.3)
    parser.add_argument(
        "--swap-share",
        type=float,
        default=0.0,
        help="share of answerable questions also asked with a name, title or number swapped "
        "(.swaps; default 0, as shipped: 0.4 measured no better on the tuning splits, docs/reader.md)",
    )
    parser.add_argument(
        "--faq-repeat",
        type=int,
        default=0,
        help="times each FAQ pair (source docs_faq) is trained on, with other negatives each time "
        "(default 0, as shipped; 1, 5 and 10, 5 with question headings and 5 on twice the FAQ files did "
        "not pass their rule on the held-out FAQ repository, docs/reader.md)",
    )
    parser.add_argument(
        "--faq-files-only",
        action="store_true",
        help="of the FAQ pairs, only those from files that name an FAQ (question headings on other "
        "pages left out: with them, 5 times measured worse on the held-out FAQ repository, docs/reader.md)",
    )
    parser.add_argument(
        "--add-sources",
        nargs="+",
        default=[],
        choices=[s for s in OPTIONAL_SOURCES if s != "docs_faq"],
        help="optional reading data to train on besides the default sources (cmrc2018_train: the whole "
        "CMRC 2018 training set, benchmarks/reader_data/SOURCES.md)",
    )
    parser.add_argument("--validation-share", type=float, default=0.04)
    parser.add_argument(
        "--context-tokens",
        type=int,
        default=0,
        help="tokens of the sentence before a candidate the reader also reads, after it (default 0, "
        "as shipped: the candidate alone; 24 read held-out paragraphs worse, docs/reader.md)",
    )
    parser.add_argument(
        "--follower-negatives",
        action="store_true",
        help="with --context-tokens: the sentence after each answering sentence is always one of its "
        "group's negatives (it reads the answer in its context; measured no better, docs/reader.md)",
    )
    parser.add_argument(
        "--teacher",
        default=None,
        help="a reader's .npz (its .json card beside it) whose logits the fit also matches (distillation; "
        "default: none, as shipped)",
    )
    parser.add_argument("--distill", type=float, default=0.5, help="share of the loss matching the teacher")
    parser.add_argument("--temperature", type=float, default=2.0, help="softmax temperature of that match")
    parser.add_argument(
        "--tuning-fold",
        choices=("0", "1", "both"),
        default=None,
        help="also train on the answer models' tuning paragraphs outside this fold (tuning_fold), "
        "so this fold's questions can fit the answer model with a reader that never saw them; "
        "both: on all of them (the reader shipped with such a cross-fitted answer model)",
    )
    args = training_arguments(parser, argv, MODEL_NAME, "chooser")
    if args is None:
        return 2
    from ...reader.listwise import fit_groups

    started = time.perf_counter()
    tally: Counter[str] = Counter()
    wanted = {*DEFAULT_SOURCES, *args.add_sources, *(["docs_faq"] if args.faq_repeat else [])}
    sources = tuple(s for s in SOURCES if s in wanted)
    everything = reading_examples(tally, sources)
    tuning_contexts = {e.context for e in everything if e.source in ANSWER_MODEL_TUNING}
    if args.tuning_fold == "both":
        tuning_contexts = set()
    elif args.tuning_fold is not None:
        tuning_contexts = {c for c in tuning_contexts if tuning_fold(c) == int(args.tuning_fold)}
    examples = [e for e in everything if e.context not in tuning_contexts]
    tally["answer_model_tuning_removed"] = len(everything) - len(examples)
    if args.faq_repeat and args.faq_files_only:
        from_files = faq_file_ids(faq_records())
        kept = [e for e in examples if e.source != "docs_faq" or e.example_id in from_files]
        tally["faq_heading_pairs_removed"] = len(examples) - len(kept)
        examples = kept
    if args.limit is not None:
        examples = random.Random(args.seed).sample(examples, min(args.limit, len(examples)))
    swapped = swapped_questions(examples, args.swap_share, args.seed)
    tally["swapped_questions"] = len(swapped)
    rng = random.Random(args.seed)
    others = hard_negatives(examples, args.seed)
    copies = repeated(examples, "docs_faq", args.faq_repeat, args.validation_share)
    tally["faq_copies"] = len(copies)
    examples = [*examples, *swapped, *copies]
    model_file = read_e5_file()
    tokenizer = Tokenizer(model_file.tokenizer)
    training: list[Group] = []
    validation: list[Group] = []
    for example in examples:
        other = others.get(example.example_id) if rng.random() < args.negative_share else None
        groups = example_groups(
            example, tokenizer, args.negatives, rng, other, args.context_tokens, args.follower_negatives
        )
        (validation if held_out(example.context, args.validation_share) else training).extend(groups)
    kinds = Counter("answer" if g.positives else "none" for g in training)
    print(
        f"{len(training)} training groups {dict(kinds)} ({len(validation)} held out), "
        f"{sum(len(g.rows) for g in training)} pairs, {sum(g.tokens for g in training)} tokens",
        file=sys.stderr,
    )
    settings = train_settings(args)
    teacher = named_chooser(args.teacher) if args.teacher else None
    taught = teacher_logits(teacher, training) if teacher is not None else None
    tuned, log = fit_groups(
        load_state_dict(model_file), training, settings, pad=tokenizer.pad,
        teacher=taught, distill=args.distill, temperature=args.temperature,
    )  # fmt: skip
    taught_by = None
    if teacher is not None:
        taught_by = {"name": teacher.name, "version": teacher.version}
        taught_by |= {"distill": args.distill, "temperature": args.temperature}
    folder = SHIPPED if args.ship else args.out
    weights_path, weights = save_tuned(tuned, model_file, folder, args.name)
    meta = {"eps": model_file.header.eps, "max_length": MAX_LENGTH, "context_tokens": args.context_tokens}
    chooser = Chooser(weights, tokenizer, meta=meta)
    scores = {lang: validate(chooser, [g for g in validation if g.language == lang]) for lang in ("en", "zh")}
    card = {
        **card_head(
            args.name,
            weights_path,
            "sentence choice: does this sentence answer the question? one logit against 'no answer' (0)",
            args.layers,
            MAX_LENGTH,
            0,
        ),
        **({"context_tokens": args.context_tokens} if args.context_tokens else {}),
        **({"follower_negatives": True} if args.follower_negatives else {}),
        "training": {
            "settings": asdict(settings),
            "negatives": args.negatives,
            "negative_share": args.negative_share,
            "swap_share": args.swap_share,
            "faq_repeat": args.faq_repeat,
            "faq_files_only": args.faq_files_only,
            "added_sources": args.add_sources,
            "tuning_fold": args.tuning_fold,
            "validation_share": args.validation_share,
            "teacher": taught_by,
            "limit": args.limit,
            "groups": dict(kinds),
            "pairs": sum(len(g.rows) for g in training),
            "counts": dict(sorted(tally.items())),
            "log": log[-5:],
            "seconds": round(time.perf_counter() - started),
        },
        "data": [
            entry
            for entry in manifest()
            if entry["source"] in sources
            and (args.tuning_fold is not None or entry["source"] not in ANSWER_MODEL_TUNING)
        ],
        "validation": scores,
        **card_tail("veracity.bench.reading.chooser", argv, weights_path),
    }
    write_card(folder, args.name, card, scores)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
