"""Question-to-answer pairs from the FAQ pages of permissively licensed documentation.

    python -m veracity.bench.reading.faq --mirrors DIR --out FILE

A FAQ page states a question as a heading (or a bold line) and answers it in the text below. That
is the kind of question the product is asked, on the kind of text it reads, which the reading
comprehension sets (encyclopedia paragraphs) lack. Per question (:func:`page_pairs`):

- the question: a heading of level 2 to 5, or a line that is bold alone, ending in ``?`` or
  ``？`` (a leading ``Q:``, ``Q1:``, ``问：`` or ``问题：`` dropped), read from a Markdown file whose
  path names an FAQ, or of some repositories from any Markdown page (question headings stand on
  ordinary pages too: :data:`REPOSITORIES`);
- the answer: the first sentence of the text under it, up to the next heading of any level, once
  code, tables, notes, comments, templating and markup are dropped (:func:`plain_text`); the
  second sentence as well when the first is a bare fragment (``支持。``, ``No.``) that leans on
  it; no pair when the first is a lead-in (it ends with a colon: it led into code or a table);
- the other sentences of the page: the first two sentences of every other question's answer, as
  sentences on the same subject that answer something else (:func:`examples`). The rest of the
  answer's own text is left out: it often answers in part, so it is neither right nor wrong.

Questions are kept once per language (the first in repository then path order). The sources
(:data:`REPOSITORIES`) are read at their pinned commits from local git mirrors (the ``fetch`` tool's
``<owner>+<name>/repo``); the output is JSON lines, sorted and byte-identical for the same mirrors.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ...model.errors import ValidationError
from ...parse.front_matter import split_front_matter
from ...reader.features import ReadingExample
from ...text.scripts import has_han
from ...text.sentences import split_sentences

REPOSITORIES: Final = (
    ("pingcap/docs-cn", "ae9ab0fd8987", "CC-BY-SA-3.0", "all"),
    ("GreptimeTeam/docs", "fc8e02ff03c5", "Apache-2.0", "faq"),
    ("cockroachdb/docs", "79e9a5d03f4b", "CC-BY-4.0", "all"),
    ("apache/iotdb-docs", "ec936229bd8a", "Apache-2.0", "all"),
    ("apache/apisix", "f519a0f04ccf", "Apache-2.0", "all"),
    ("milvus-io/milvus-docs", "54a32fdaebb0", "Apache-2.0", "all"),
    ("apache/dolphinscheduler", "7e0095dca198", "Apache-2.0", "all"),
    ("prometheus/docs", "c105550aad07", "Apache-2.0", "all"),
    ("vuejs/docs", "01e098a96795", "CC-BY-4.0", "all"),
    ("vuejs-translations/docs-zh-cn", "c2715ff75bae", "CC-BY-4.0", "all"),
    ("pingcap/docs-dm", "765ffc42a192", "Apache-2.0", "all"),
    ("pingcap/docs-tidb-operator", "4c2e5dc8b7fd", "CC-BY-SA-3.0", "all"),
    ("apache/skywalking", "5839d2ad4237", "Apache-2.0", "all"),
    ("apache/seatunnel", "15431c94d9b9", "Apache-2.0", "all"),
    ("kubevela/kubevela.io", "0f169199c0ef", "Apache-2.0", "all"),
    ("karmada-io/website", "747f80c48c9a", "CC-BY-4.0", "all"),
    ("juicedata/juicefs", "a6a0299bdfb7", "Apache-2.0", "faq"),
    ("PaddlePaddle/docs", "46ceb37d54c1", "Apache-2.0", "faq"),
    ("apache/flink-cdc", "23fb108e9bea", "Apache-2.0", "faq"),
    ("sofastack/sofastack.tech", "38c28a43d187", "Apache-2.0", "faq"),
    ("alibaba/arthas", "a5ecd7a84a93", "Apache-2.0", "faq"),
    ("eggjs/egg", "dc8fa5e67707", "MIT", "faq"),
    ("umijs/umi", "a4a2b588e29a", "MIT", "faq"),
    ("fluid-cloudnative/fluid", "a826600a4322", "Apache-2.0", "faq"),
    ("open-mmlab/mmpretrain", "ee7f2e88501f", "Apache-2.0", "faq"),
    ("helm/helm-www", "227f41447a68", "MIT", "faq"),
    ("expressjs/expressjs.com", "b9d510698d15", "CC-BY-4.0", "faq"),
    ("matrixorigin/matrixorigin.io", "b3e5003c997f", "Apache-2.0", "faq"),
    ("reduxjs/redux", "3084fc33bb23", "MIT", "faq"),
    ("pnpm/pnpm.io", "4096ad35b19c", "MIT", "faq"),
    ("typeorm/typeorm", "281bfba42a58", "MIT", "faq"),
)
"""(repository, commit, licence of its documentation, which files) in reading order. Which files:
``"faq"``, the Markdown files whose path names an FAQ; ``"all"``, every Markdown file outside a
dot folder (a question heading on any page: "What is a spatial index?", "为什么…？")."""

HELD_OUT: Final = frozenset({"GreptimeTeam/docs"})
"""Repositories never trained on: their pairs measure sentence choice on documentation nobody
trained on (``benchmarks/chooser_faq_heldout.py``)."""

FAQ_FILE: Final = "docs_faq/faq.jsonl"
"""Where the pairs live under ``benchmarks/reader_data`` (not in the repository: made by this module)."""
FAQ_SHA256: Final = "889ce27a4315969fa1d8727a19ad5c053f7455650173304bd452dc343987e81d"
"""The sha256 of the file this module writes from the mirrors at the pinned commits."""

MIN_QUESTION, MAX_QUESTION = 5, 200
"""Question length in characters: shorter is a fragment; longer is several questions or a log."""
OTHER_SENTENCES: Final = 2
"""Sentences taken from each other answer of the page."""
MIN_FRAGMENT: Final = {"zh": 8, "en": 20}
"""A first sentence shorter than this (characters) is a fragment that leans on the next one."""

_HEADING: Final = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BOLD_LINE: Final = re.compile(r"^\s*(?:\*\*|__)(.+?)(?:\*\*|__)\s*$")
FENCE: Final = re.compile(r"\s*(```|~~~)")
"""A code fence line (with ``match``)."""
_DROPPED_BLOCKS: Final = (
    re.compile(r"\{%\s*comment\s*%\}.*?\{%\s*endcomment\s*%\}", re.S),
    re.compile(r"\{\{\s*site\.data\.alerts\.callout.*?\{\{\s*site\.data\.alerts\.end\s*\}\}", re.S),
    re.compile(r"<!--.*?-->", re.S),
    re.compile(r"^:::.*?^:::\s*$", re.S | re.M),
)
_INLINE: Final = (
    (re.compile(r"!\[[^\]]*\]\([^)]*\)"), ""),
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1"),
    (re.compile(r"\{%.*?%\}|\{\{.*?\}\}"), ""),
    (re.compile(r"<[^>]+>"), ""),
    (re.compile(r"\{#[^}]*\}"), ""),
    (re.compile(r"(\*\*|__|`)"), ""),
)
_SKIPPED_LINE: Final = re.compile(r"^\s*(>|\||!\[|<|\{%|\{\{|import\s|export\s|[-*_]{3,}\s*$)")
_LEAD_IN: Final = re.compile(r"[:：]\s*$")
_NUMBERING: Final = re.compile(r"^\(?\d+(\.\d+)*[.、)）]?\s+")
_LINE_MARK: Final = re.compile(r"^(?:[-*+]\s+|\d+[.)]\s+)?(?:(?:A|答复|回答|答)\s*[:：]\s*)?")
"""A list item's mark, the "A:" ("答：", "答复：", "回答：") of a question-and-answer pair, or both."""
_OTHER_LANGUAGE: Final = re.compile(
    r"(?:ar|bg|cs|da|de|el|es|fa|fi|fr|he|hi|hu|id|it|ja|ko|nl|pl|pt|ro|ru|sk|sv|th|tr|uk|vi)"
    r"(?:[-_][a-z]{2,4})?",
    re.I,
)
"""A locale folder or file name suffix of a language other than English and Chinese
(``i18n/ja/…``, ``docs/pt-br/…``, ``faq.ko-KR.md``): :func:`language_of` tells only those two apart."""
FAQ_NAME: Final = re.compile(r"faq|frequently[-_ ]asked|常见问题|常見問題", re.I)
"""What a path that names an FAQ holds (``docs/faq/sql-faq.md``, ``frequently-asked-questions.md``)."""
_THIRD_PARTY: Final = frozenset({"vendor", "node_modules", "third_party", "3rdparty"})
"""Folders of other projects' files (their FAQ files are theirs, under their licences)."""


def language_of(text: str) -> str:
    return "zh" if has_han(text) else "en"


def inline_text(line: str) -> str:
    """A line without links' targets, images, templating, tags and emphasis marks."""
    for pattern, replacement in _INLINE:
        line = pattern.sub(replacement, line)
    return " ".join(line.split())


def plain_text(markdown: str) -> str:
    """Prose lines of Markdown: code, tables, block quotes (notes), HTML, templating and
    comments dropped; list items kept as lines; paragraphs apart by a blank line."""
    for block in _DROPPED_BLOCKS:
        markdown = block.sub("\n", markdown)
    lines: list[str] = []
    fenced = False
    for line in markdown.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or _SKIPPED_LINE.match(line):
            lines.append("")
            continue
        lines.append(inline_text(line))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _front_matter_title(markdown: str) -> tuple[str, str]:
    """(title from the front matter or "", the text after it); a page whose front matter is not
    valid YAML has no title from it."""
    try:
        metadata, body = split_front_matter(markdown)
    except ValidationError:
        return "", markdown
    title = metadata.get("title")
    return ("" if title is None else str(title)), body


def _question(line: str) -> str | None:
    """The question a heading of level 2-5 or a bold line states, else None."""
    heading = _HEADING.match(line)
    if heading and 2 <= len(heading.group(1)) <= 5:
        text = inline_text(heading.group(2))
    elif bold := _BOLD_LINE.match(line):
        text = inline_text(bold.group(1))
    else:
        return None
    text = _NUMBERING.sub("", re.sub(r"^(Q\d*|问题|问)\s*[:：]\s*", "", text)).strip()
    if not text.endswith(("?", "？")) or not MIN_QUESTION <= len(text) <= MAX_QUESTION:
        return None
    return text


@dataclass(frozen=True, slots=True)
class Section:
    question: str
    sentences: tuple[str, ...]


def page_sections(markdown: str) -> tuple[str, list[Section]]:
    """(page title, the question sections of a page with their answer's sentences)."""
    title, body = _front_matter_title(markdown)
    sections: list[Section] = []
    question: str | None = None
    buffer: list[str] = []
    fenced = False

    def close() -> None:
        if question is not None:
            text = plain_text("\n".join(buffer))
            stripped = (_LINE_MARK.sub("", " ".join(text[b:e].split())) for b, e in split_sentences(text))
            sentences = tuple(sentence for sentence in stripped if sentence)
            if sentences:
                sections.append(Section(question, sentences))

    for line in body.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        asked = None if fenced else _question(line)
        if heading and len(heading.group(1)) == 1 and not title:
            title = inline_text(heading.group(2))
        if asked is not None or heading:
            close()
            question, buffer = asked, []
        elif question is not None:
            buffer.append(line)
    close()
    return title, sections


def answer_sentences(section: Section, language: str) -> tuple[str, ...]:
    """The sentences that answer: the first, and the next when the first is a bare fragment that
    leans on it; none when the first is a lead-in (what it leads into is often code or a table,
    dropped here, and the next sentence is then about something else)."""
    first = section.sentences[0]
    if _LEAD_IN.search(first):
        return ()
    if len(first) < MIN_FRAGMENT[language] and len(section.sentences) > 1:
        return section.sentences[:2] if not _LEAD_IN.search(section.sentences[1]) else ()
    return section.sentences[:1]


def page_pairs(markdown: str) -> Iterator[dict[str, object]]:
    """Per question of a page: title, question, language, answer sentences, the page's others."""
    title, sections = page_sections(markdown)
    for index, section in enumerate(sections):
        language = language_of(section.question)
        if not (answer := answer_sentences(section, language)):
            continue
        others = [
            sentence
            for other_index, other in enumerate(sections)
            if other_index != index
            for sentence in other.sentences[:OTHER_SENTENCES]
            if sentence not in answer
        ]
        yield {
            "title": title,
            "question": section.question,
            "language": language,
            "answer": list(answer),
            "others": others,
        }


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True
    ).stdout


def read_path(path: str, files: str) -> bool:
    """Whether a repository's file is read: a Markdown file, naming an FAQ when ``files`` is
    ``"faq"``, outside a dot folder (``.github`` issue templates ask questions of their own),
    a third-party folder and a locale of a language other than English and Chinese."""
    *folders, name = path.split("/")
    if not path.endswith((".md", ".mdx")) or any(part.startswith(".") for part in folders):
        return False
    if any(part.lower() in _THIRD_PARTY for part in folders):
        return False
    if any(_OTHER_LANGUAGE.fullmatch(part) for part in folders + name.split(".")[1:-1]):
        return False
    return files == "all" or FAQ_NAME.search(path) is not None


def repository_pairs(
    git_dir: Path, repository: str, commit: str, licence: str, files: str = "faq"
) -> Iterator[dict[str, object]]:
    """The pairs of the Markdown files of a repository at ``commit`` that ``files`` selects
    (:func:`read_path`), in path order."""
    names = _git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()
    for path in sorted(n for n in names if read_path(n, files)):
        markdown = _git(git_dir, "show", f"{commit}:{path}")
        for pair in page_pairs(markdown):
            yield {"repository": repository, "commit": commit, "path": path, "licence": licence, **pair}


def collect(mirrors: Path) -> list[dict[str, object]]:
    """Every source's pairs, each question once per language (the first in reading order)."""
    seen: set[tuple[str, str]] = set()
    kept: list[dict[str, object]] = []
    for repository, commit, licence, files in REPOSITORIES:
        git_dir = mirrors / repository.replace("/", "+") / "repo"
        for pair in repository_pairs(git_dir, repository, commit, licence, files):
            key = (str(pair["language"]), " ".join(str(pair["question"]).casefold().split()))
            if key not in seen:
                seen.add(key)
                kept.append(pair)
    return kept


def read_records(path: Path, *, sha256: str | None = None) -> list[dict[str, object]]:
    """The pairs of a JSON lines file this module wrote; refused unless its digest is ``sha256``
    (when given)."""
    data = path.read_bytes()
    if sha256 is not None and (digest := hashlib.sha256(data).hexdigest()) != sha256:
        raise ValueError(f"{path.name} has sha256 {digest}, not {sha256}: recreate it (SOURCES.md)")
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def example_id(source: str, number: int) -> str:
    """The id of the reading example made of the ``number``-th record (0-based, file order)."""
    return f"{source}:{number}"


def faq_file_ids(records: Sequence[dict[str, object]], source: str = "docs_faq") -> frozenset[str]:
    """The ids of the examples whose pair comes from a file that names an FAQ (:data:`FAQ_NAME`),
    not from a question heading on another page: what ``chooser --faq-files-only`` keeps."""
    return frozenset(
        example_id(source, number)
        for number, record in enumerate(records)
        if FAQ_NAME.search(str(record["path"])) is not None
    )


def examples(
    records: Sequence[dict[str, object]], source: str = "docs_faq", *, held_out: bool = False
) -> Iterator[ReadingExample]:
    """Reading examples of the training repositories (``held_out``: of :data:`HELD_OUT` alone):
    the answer sentences first, then the page's other sentences, one paragraph each; the answers
    are the answer sentences."""
    for number, record in enumerate(records):
        if (record["repository"] in HELD_OUT) != held_out:
            continue
        answer = [str(s) for s in record["answer"]]  # type: ignore[attr-defined]
        others = [str(s) for s in record["others"]]  # type: ignore[attr-defined]
        context = "\n\n".join(answer + others)
        starts, position = [], 0
        for sentence in answer:
            starts.append((sentence, position))
            position += len(sentence) + 2
        yield ReadingExample(
            example_id(source, number),
            source,
            str(record["language"]),
            str(record["title"]),
            context,
            str(record["question"]),
            tuple(starts),
            False,
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m veracity.bench.reading.faq", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--mirrors",
        type=Path,
        required=True,
        help="folder of the git mirrors: <owner>+<name>/repo each (a bare clone or a clone's .git)",
    )
    parser.add_argument("--out", type=Path, required=True, help="JSON lines file to write")
    args = parser.parse_args(argv)
    try:
        pairs = collect(args.mirrors)
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"error: cannot read a mirror: {error}", file=sys.stderr)
        return 1
    data = "".join(json.dumps(p, ensure_ascii=False, sort_keys=True) + "\n" for p in pairs).encode()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    by_language = dict(Counter(str(pair["language"]) for pair in pairs))
    print(
        json.dumps(
            {"pairs": len(pairs), "by_language": by_language, "sha256": hashlib.sha256(data).hexdigest()}
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
