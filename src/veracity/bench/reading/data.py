"""Training data of the reading model (the *reader*): licence-checked extractive QA, English and Chinese.

Sources (:data:`SOURCES`; files, digests and licences in :data:`FILES`, :data:`DOCS_TREES` and
``benchmarks/reader_data/SOURCES.md``): the tuning parts of the shared sets, read from
``shared/datasets`` (SQuAD 2.0 half-dev part ``tune``, CMRC 2018 ``trial``, DRCD ``test``); and, in
``benchmarks/reader_data/``, the first ten SQuAD 2.0 train articles, the official SQuAD 2.0 dev
article *Rhine*, XQuAD en and zh, the first 30 CMRC 2018 train passages, and the documentation
files that answer the docs tuning sets (``benchmarks/docs_questions/tune/``), cut into sections.

No reporting data: :func:`training_examples` drops an example whose question or context equals
(whitespace collapsed; also NFKC + case folded) one of :func:`reporting_texts` (SQuAD 2.0 half-dev
part ``report``, CMRC 2018 ``dev``, DRCD ``dev``, the docs reporting sets); XQuAD articles with a
title or paragraph in the SQuAD report part go whole, in both languages. Answer offsets are checked;
a wrong one moves to the nearest occurrence of its text, or the answer is dropped (all counted).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from ...reader.features import ReadingExample
from ...text.scripts import HAN_RANGES
from ..docs_questions import EMPHASIS, SPACE, load_docs_questions
from ..qa import NAMED_PARTS
from ..shared import MISSING, PROJECT_ROOT, datasets_folder
from .faq import FAQ_FILE, FAQ_SHA256, FENCE, read_records
from .faq import examples as faq_examples

DATA: Final = PROJECT_ROOT / "benchmarks" / "reader_data"
DOCS_SETS: Final = PROJECT_ROOT / "benchmarks" / "docs_questions"
MAX_CONTEXT: Final = 1200
"""Longest docs context (characters); longer sections are cut at blank lines, then at lines."""

Answer = tuple[str, int]
_docs_set = lru_cache(maxsize=16)(load_docs_questions)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A source's file: where it lives (``shared:`` data sets, ``data:`` ``benchmarks/reader_data``),
    where it came from, the sha256 of its original (uncompressed) bytes and its licence."""

    source: str
    path: str
    repository: str
    commit: str
    original_path: str
    sha256: str
    licence: str


_FILE_TABLE: Final = """
squad2_dev_tune shared:squad2_dev_half/original/dev-v2.0.json.gz
  chrischute/squad data/dev-v2.0.json CC-BY-SA-4.0
  85623adeb9e6639f145081fea9cae2d8f3a26379 e67e5969b6dc6c1642154740806b79263b77fc048c7c11ee60d534eb48ef81e8
squad2_train_head data:squad2_train_head/train-v2.0.json.gz
  PhongNTDo/guide_train_MRC_transformers train-v2.0.json CC-BY-SA-4.0
  f626fe886397c8c6b71fdb453707a1522b5c52dd 53e67dd96e8597a8ef600e795d54d3fdef18486d42721884d38d652e2a2638cb
squad2_dev_rhine data:squad2_dev_rhine/dev-v2.0.json
  appcoreopc/squad2controlled dev-v2.0.json CC-BY-SA-4.0
  d3ba91615be4eaa0707d2789b2ae627bed94e69c 9ad86c67156a705cc7ee4e18846589aedd081ff3c10c32544312d3dd269af026
xquad_en data:xquad/xquad.en.json
  google-deepmind/xquad xquad.en.json CC-BY-SA-4.0
  99910ec0f10151652f6726282ca922dd8eb0207a e4c57d1c9143aaa1c5d265ba5987a65f4e69528d2a98f29d6e75019b10344f29
xquad_zh data:xquad/xquad.zh.json
  google-deepmind/xquad xquad.zh.json CC-BY-SA-4.0
  99910ec0f10151652f6726282ca922dd8eb0207a 691d0b3359bc6b8faa8de931dfdfe21d50a65861ae348e32a0d1a0190b0c8835
cmrc2018_trial shared:cmrc2018/original/cmrc2018_trial.json
  ymcui/cmrc2018 squad-style-data/cmrc2018_trial.json CC-BY-SA-4.0
  c0eb1b6ba219847457e6af3180da722bbeb656af f3fae95b57da8e03afb2b57467dd221417060ef4d82db13bf22fc88589f3a6f3
cmrc2018_train_head data:cmrc2018_train_head/cmrc2018_train.json
  DeerEyre/bert-qa data/cmrc2018_train.json CC-BY-SA-4.0
  65702f773e239b00442a0e402b30a4c7e4488cb3 09066735f495a926bc39a7cfc6f99682d141dbeb45dd7297956abfcdc395f3ea
cmrc2018_train data:cmrc2018_train/train.json.gz
  cingtiye/Chinese_question_sentence_judgment data/cmrc2018_public.zip:train.json CC-BY-SA-4.0
  5ba62f37c2ec1a21bc6180b3a6d11dcb4b494f6b 5497aa2f81908e31d6b0e27d99b1f90ab63a8f58fa92fffe5d17cf62eba0c212
drcd_test shared:drcd/original/DRCD_test.json.gz
  DRCSolutionService/DRCD DRCD_test.json CC-BY-SA-3.0
  b944790de5af02c5fbb7cd9cb1473d27d169eebf d9de0b4d247a8391ac8daee6c02c2c8272b75562a1e2377b50ae04ecc09a7438
"""
"""Per file: source, location; repository, original path, licence; commit, sha256 of the original."""

FILES: Final = tuple(
    SourceFile(source, path, repository, commit, original, sha256, licence)
    for source, path, repository, original, licence, commit, sha256 in (
        " ".join(lines).split() for lines in zip(*[iter(_FILE_TABLE.strip().splitlines())] * 3, strict=True)
    )
)
"""Every data file a source reads, except the documentation files (see :data:`DOCS_TREES`)."""

DOCS_TREES: Final = {
    "antd-zh": ("MIT", "bf1cf2ae4f27fb6bf76a3d07fc9a13ed028a190c429c7eba7f80ca34af4dad6b"),
    "fastapi-zh": ("MIT", "56f5338efa9bd2586759b846a887dd58cddd9cb9e9b98ef1383b78028635d736"),
    "mkdocs-en": ("BSD-2-Clause", "261a27ec1a71ad54b9a734f1db1f0f4eb746930658ec4dbbe289fe9c166e0462"),
    "poetry-en": ("MIT", "5e3b266d8c025fd45a8d3901d723a50a44cea3dc4f8528bb0353778353312400"),
}
"""Docs tuning set → (licence of its documents, sha256 of its stored tree: :func:`tree_digest`)."""

SOURCES: Final = tuple(
    "squad2_dev_tune squad2_train_head squad2_dev_rhine xquad_en xquad_zh cmrc2018_trial "
    "cmrc2018_train_head cmrc2018_train drcd_test docs_tune docs_faq".split()
)
"""In load order: when two sources hold the same (context, question), the earlier keeps it."""

OPTIONAL_SOURCES: Final = ("cmrc2018_train", "docs_faq")
"""Sources read only when asked for: ``docs_faq`` (``chooser --faq-repeat``) did not pass its rule
(docs/reader.md); ``cmrc2018_train`` (``chooser --add-sources``), the whole CMRC 2018 training set,
was found after the shipped readers were trained."""

DEFAULT_SOURCES: Final = tuple(s for s in SOURCES if s not in OPTIONAL_SOURCES)
"""What the training commands read unless asked for more: what the shipped readers were trained on."""

REPORTING: Final = (
    ("squad2_dev_half/original/dev-v2.0.json.gz", NAMED_PARTS["squad2_dev_half"]["report"]),
    ("cmrc2018/original/cmrc2018_dev.json.gz", "all"),
    ("drcd/original/DRCD_dev.json.gz", "all"),
)
"""The reporting splits in the shared data sets: file and part (``articles:A:B`` or ``all``)."""


@lru_cache(maxsize=1 << 16)
def text_keys(text: str) -> tuple[str, str]:
    """What counts as "the same text": whitespace collapsed; and also NFKC + case folded."""
    return " ".join(text.split()), " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


@dataclass(frozen=True, slots=True)
class ReportingTexts:
    """The :func:`text_keys` of every reporting question and context, and the SQuAD report titles."""

    questions: frozenset[str]
    contexts: frozenset[str]
    titles: frozenset[str]

    def holds(self, question: str, context: str) -> bool:
        """Whether the question or the context is a reporting one."""
        keys = text_keys(question), text_keys(context)
        return not (self.questions.isdisjoint(keys[0]) and self.contexts.isdisjoint(keys[1]))


def _location(spec: str, datasets: Path | None) -> Path | None:
    where, _, rel = spec.partition(":")
    folder = (datasets or datasets_folder()) if where == "shared" else DATA
    return None if folder is None else folder / rel


def available_sources(datasets: Path | None = None) -> tuple[str, ...]:
    """The sources whose files are all on this machine. The shared tuning splits come with the
    shared data sets; the files taken from other repositories are not in this repository (see
    ``benchmarks/reader_data/SOURCES.md``: where each comes from, and its digest)."""
    found = []
    for source in SOURCES:
        if source == "docs_tune":
            present = all((DATA / "docs" / stem).is_dir() for stem in DOCS_TREES)
        elif source == "docs_faq":
            present = (DATA / FAQ_FILE).is_file()
        else:
            paths = [_location(f.path, datasets) for f in FILES if f.source == source]
            present = all(path is not None and path.is_file() for path in paths)
        if present:
            found.append(source)
    return tuple(found)


def _read(spec: str, datasets: Path | None) -> bytes:
    """The original bytes of ``shared:<path>`` (shared data sets) or ``data:<path>`` (reader_data)."""
    where, _, rel = spec.partition(":")
    folder = (datasets or datasets_folder()) if where == "shared" else DATA
    if folder is None:
        raise FileNotFoundError(MISSING)
    raw = (folder / rel).read_bytes()
    return gzip.decompress(raw) if rel.endswith(".gz") else raw


@lru_cache(maxsize=4)
def reporting_texts(datasets: Path | None = None) -> ReportingTexts:
    """The reporting splits' questions and contexts (shared data sets: ``$VERACITY_DATASETS`` or
    ``../shared/datasets``) and the docs reporting sets' questions (``benchmarks/docs_questions/*.yaml``)."""
    questions, contexts, titles = set[str](), set[str](), set[str]()
    for rel, part in REPORTING:
        articles = json.loads(_read(f"shared:{rel}", datasets))["data"]
        for article in articles if part == "all" else articles[slice(*map(int, part.split(":")[1:]))]:
            if rel.startswith("squad2"):
                titles.add(article["title"])
            for paragraph in article["paragraphs"]:
                contexts.update(text_keys(paragraph["context"]))
                for qa in paragraph["qas"]:
                    questions.update(text_keys(qa["question"]))
    for path in sorted(DOCS_SETS.glob("*.yaml")):
        questions.update(k for q in _docs_set(path).questions for k in text_keys(q.question))
    return ReportingTexts(frozenset(questions), frozenset(contexts), frozenset(titles))


def _answers(context: str, raw: list[dict[str, Any]], tally: Counter[str], source: str) -> tuple[Answer, ...]:
    """Verified (text, start) pairs, first occurrence order; a wrong offset moves to the nearest match."""
    found: list[Answer] = []
    for answer in raw:
        text, start = str(answer["text"]), int(answer["answer_start"])
        if not text.strip():
            tally[f"{source}/answers_empty_dropped"] += 1
            continue
        if context[start : start + len(text)] != text:
            if not (hits := [m.start() for m in re.finditer(re.escape(text), context)]):
                tally[f"{source}/answers_unfound_dropped"] += 1
                continue
            start = min(hits, key=lambda h: abs(h - start))
            tally[f"{source}/offsets_fixed"] += 1
        if (text, start) not in found:
            found.append((text, start))
    return tuple(found)


def _squad(
    articles: list[dict[str, Any]], kept: list[bool], source: str, language: str, tally: Counter[str]
) -> Iterator[ReadingExample]:
    """Examples of a SQuAD-format file (SQuAD 2.0, XQuAD, CMRC 2018 squad-style, DRCD: the same
    ``answers[].{text, answer_start}``; DRCD adds an answer ``id``, SQuAD 2.0 ``is_impossible``)."""
    for article, keep in zip(articles, kept, strict=True):
        if not keep:
            tally[f"{source}/articles_removed"] += 1
            removed = sum(len(p["qas"]) for p in article["paragraphs"])
            tally[f"{source}/questions_removed_with_articles"] += removed
            continue
        title = str(article.get("title", ""))
        for paragraph in article["paragraphs"]:
            text = paragraph["context"]
            for qa in paragraph["qas"]:
                if not qa["question"].strip():
                    tally[f"{source}/questions_empty_dropped"] += 1
                    continue
                impossible = bool(qa.get("is_impossible", False))
                answers = () if impossible else _answers(text, qa["answers"], tally, source)
                if not impossible and not answers:
                    tally[f"{source}/questions_without_valid_answer_dropped"] += 1
                    continue
                ask, key = qa["question"], f"{source}:{qa['id']}"
                yield ReadingExample(key, source, language, title, text, ask, answers, impossible)


def _load(source: str, datasets: Path | None) -> dict[str, Any]:
    (file,) = [f for f in FILES if f.source == source]
    return json.loads(_read(file.path, datasets))


def _xquad_kept(reporting: ReportingTexts, datasets: Path | None) -> list[bool]:
    """Per XQuAD article: False when its title or a paragraph is in the SQuAD report part."""
    english, chinese = _load("xquad_en", datasets)["data"], _load("xquad_zh", datasets)["data"]
    ids = [[q["id"] for p in a["paragraphs"] for q in p["qas"]] for a in english]
    if ids != [[q["id"] for p in a["paragraphs"] for q in p["qas"]] for a in chinese]:
        raise ValueError("xquad.en.json and xquad.zh.json are not aligned article by article")
    return [
        article["title"] not in reporting.titles
        and not any(k in reporting.contexts for p in article["paragraphs"] for k in text_keys(p["context"]))
        for article in english
    ]


def _source_examples(
    source: str, reporting: ReportingTexts, datasets: Path | None, tally: Counter[str]
) -> Iterator[ReadingExample]:
    if source == "docs_tune":
        yield from _docs_examples(tally)
        return
    if source == "docs_faq":
        yield from faq_examples(faq_records())
        return
    articles: list[dict[str, Any]] = _load(source, datasets)["data"]
    kept = [True] * len(articles)
    if source == "squad2_dev_tune":
        start, stop = map(int, NAMED_PARTS["squad2_dev_half"]["tune"].split(":")[1:])
        kept = [start <= i < stop for i in range(len(articles))]
    elif source == "squad2_dev_rhine":  # its Normans article is the half-dev's own (tune part)
        half = {a["title"] for a in _load("squad2_dev_tune", datasets)["data"]}
        kept = [a["title"] not in half for a in articles]
    elif source.startswith("xquad"):
        kept = _xquad_kept(reporting, datasets)
    language = "en" if source.startswith(("squad2", "xquad_en")) else "zh"
    yield from _squad(articles, kept, source, language, tally)


def training_examples(
    sources: Sequence[str] = SOURCES, *, datasets: Path | None = None, tally: Counter[str] | None = None
) -> Iterator[ReadingExample]:
    """The training examples of ``sources`` (default: all), reporting overlap and duplicate
    (context, question) pairs removed; ``tally`` receives ``<source>/<what>`` counts."""
    if unknown := set(sources) - set(SOURCES):
        raise ValueError(f"unknown reader data sources {sorted(unknown)}; valid: {', '.join(SOURCES)}")
    counts: Counter[str] = tally if tally is not None else Counter()
    reporting = reporting_texts(datasets)
    seen: set[tuple[str, str]] = set()
    for source in [s for s in SOURCES if s in sources]:
        for example in _source_examples(source, reporting, datasets, counts):
            if reporting.holds(example.question, example.context):
                counts[f"{source}/reporting_overlap_removed"] += 1
                continue
            if (key := (text_keys(example.context)[1], text_keys(example.question)[1])) in seen:
                counts[f"{source}/duplicates_removed"] += 1
                continue
            seen.add(key)
            counts[f"{source}/{example.language}/{'impossible' if example.impossible else 'answerable'}"] += 1
            yield example


HEADING = re.compile(r"#{1,6}\s")
WORD = re.compile(f"[a-z0-9]+|[{HAN_RANGES}]+")


def markdown_chunks(text: str) -> list[str]:
    """A Markdown file cut at headings (outside code fences), then to :data:`MAX_CONTEXT`
    characters at blank lines, then at lines (a longer single line stays whole)."""
    sections: list[list[str]] = [[]]
    fenced = False
    for line in text.splitlines(keepends=True):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and HEADING.match(line) and sections[-1]:
            sections.append([])
        sections[-1].append(line)
    chunks: list[str] = []
    for section in sections:
        paragraphs = re.split(r"\n[ \t]*\n", "".join(section))
        pieces = [p for para in paragraphs for p in _pack(para.splitlines(), "\n")]
        chunks.extend(c.strip() for c in _pack(pieces, "\n\n") if c.strip())
    return chunks


def _pack(parts: Sequence[str], joiner: str) -> list[str]:
    out: list[str] = []
    for part in parts:
        if out and len(out[-1]) + len(joiner) + len(part) <= MAX_CONTEXT:
            out[-1] += joiner + part
        else:
            out.append(part)
    return out


@lru_cache(maxsize=4096)
def _loose(gold: str) -> re.Pattern[str]:
    core = SPACE.sub(" ", EMPHASIS.sub("", gold)).strip()
    pattern = r"[`*_]*".join(r"\s+" if ch == " " else re.escape(ch) for ch in core)
    return re.compile(pattern or r"(?!)", re.IGNORECASE)


def gold_span(chunk: str, gold: str) -> Answer | None:
    """Where a docs gold string lies in ``chunk``: verbatim, else with Markdown markers
    (`` ` * _``) anywhere between its characters, runs of whitespace equal, any case."""
    if (start := chunk.find(gold)) >= 0:
        return gold, start
    match = _loose(gold).search(chunk)
    return (match.group(), match.start()) if match else None


def _terms(text: str) -> set[str]:
    """Lower-cased ASCII words and CJK character bigrams."""
    runs = WORD.findall(text.lower())
    return {r for r in runs if r.isascii()} | {
        r[i : i + 2] for r in runs if not r.isascii() for i in range(max(1, len(r) - 1))
    }


def _docs_examples(tally: Counter[str]) -> Iterator[ReadingExample]:
    """Docs tuning questions on the section of a listed file that holds the most gold strings;
    an unanswerable one on the set's section sharing the most (idf-weighted) terms with it."""
    for path in sorted((DOCS_SETS / "tune").glob("*.yaml")):
        spec = _docs_set(path)
        root = DATA / "docs" / path.stem
        files = sorted({f for q in spec.questions for f in q.files})
        chunks = {f: markdown_chunks((root / f).read_text(encoding="utf-8")) for f in files}
        pool = [(f, c, _terms(c)) for f in files for c in chunks[f]]
        idf = {t: math.log(len(pool) / n) for t, n in Counter(t for *_, terms in pool for t in terms).items()}
        for q in spec.questions:
            best: tuple[str, str, tuple[Answer, ...]] | None = None
            if q.answerable:
                for f in q.files:
                    for chunk in chunks[f]:
                        spans = tuple(dict.fromkeys(s for g in q.answers if (s := gold_span(chunk, g))))
                        if spans and (best is None or len(spans) > len(best[2])):
                            best = (f, chunk, spans)
                if best is None:
                    tally["docs_tune/answerable_without_gold_in_files_dropped"] += 1
                    continue
            else:
                asked = _terms(q.question)
                f, chunk, _ = max(pool, key=lambda item: sum(idf[t] for t in asked & item[2]))
                best = (f, chunk, ())
            title, key = f"{spec.source.get('repo', path.stem)}/{best[0]}", f"docs_tune:{q.question_id}"
            yield ReadingExample(
                key, "docs_tune", spec.language, title, best[1], q.question, best[2], not q.answerable
            )


def tree_digest(folder: Path) -> str:
    """sha256 over the sorted ``<relative path>\\0<sha256 of the file>\\n`` lines of a folder."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    lines = sorted(
        f"{p.relative_to(folder).as_posix()}\0{hashlib.sha256(p.read_bytes()).hexdigest()}\n" for p in files
    )
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def manifest(datasets: Path | None = None) -> list[dict[str, Any]]:
    """Per data file (and per docs tree): source, location, repository, commit, original path,
    recorded and present sha256 and licence: the training-data section of the model card."""
    rows: list[dict[str, Any]] = []
    for file in FILES:
        location = _location(file.path, datasets)
        present = (
            hashlib.sha256(_read(file.path, datasets)).hexdigest()
            if location is not None and location.is_file()
            else None
        )
        rows.append({**asdict(file), "sha256_present": present, "ok": present == file.sha256})
    return rows + docs_trees_manifest() + [_faq_manifest()]


def faq_records() -> list[dict[str, Any]]:
    """The FAQ pairs (:mod:`.faq`), refused unless their digest is the recorded one."""
    return read_records(DATA / FAQ_FILE, sha256=FAQ_SHA256)


def _faq_manifest() -> dict[str, Any]:
    path = DATA / FAQ_FILE
    present = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    row = SourceFile(
        "docs_faq",
        f"data:{FAQ_FILE}",
        "the repositories of veracity.bench.reading.faq.REPOSITORIES",
        "each at its pinned commit",
        "FAQ Markdown files (derived: python -m veracity.bench.reading.faq)",
        FAQ_SHA256,
        "Apache-2.0, CC-BY-4.0, CC-BY-SA-3.0, MIT (per repository)",
    )
    return {**asdict(row), "sha256_present": present, "ok": present == FAQ_SHA256}


def docs_trees_manifest() -> list[dict[str, Any]]:
    """Per docs tree (:data:`DOCS_TREES`): its row of :func:`manifest` (repository, commit, root,
    recorded and present tree digest, licence); the guard's card lists them too."""
    rows: list[dict[str, Any]] = []
    for stem, (licence, digest) in DOCS_TREES.items():
        origin = _docs_set(DOCS_SETS / "tune" / f"{stem}.yaml").source
        folder = DATA / "docs" / stem
        root, present = origin.get("root", ""), tree_digest(folder) if folder.is_dir() else None
        tree = SourceFile(
            "docs_tune", f"data:docs/{stem}/", origin["repo"], origin["commit"], root, digest, licence
        )
        rows.append({**asdict(tree), "sha256_present": present, "ok": present == digest})
    return rows
