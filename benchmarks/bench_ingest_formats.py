"""Ingest throughput per source format (files/s, chunks/s) on a generated corpus.

For each format (markdown, text, html, pdf, docx) the script writes ``--files``
Chinese + English documents (a title, two sections of a few paragraphs, one
table where the format has tables: Markdown, HTML, DOCX) with governance
metadata, then ingests that format's folder into its own fresh knowledge base
with :func:`veracity.ingest.run.ingest_paths` and prints one row per format.

Metadata: Markdown front matter, HTML ``<meta name="veracity:FIELD">`` tags,
and for text, PDF and DOCX a ``NAME.meta.yaml`` sidecar per file
(``--metadata sidecar``, the default) or one mapping file per format passed as
``metadata_file`` (``--metadata mapping``).

PDFs are laid out here and written byte by byte by
:mod:`veracity.testing.pdf_builder` (the builder the ingest tests use): one
Type0 font with a generated ``ToUnicode`` map, so mixed Chinese/English text
extracts without any font file. DOCX files are written with python-docx (the
``docx`` extra).

Timing: ``wall s`` is the whole ``ingest_paths`` call; ``ingest s`` is the sum
of its stage timings except embedding (parse, chunk, catalog, tokenize,
write) and is the denominator of ``files/s`` and ``chunks/s``; ``embed s`` is
the embedding stage, reported apart. With ``--embedder fake`` (the default)
embedding is a hashed bag of tokens, close to free; with ``--embedder use`` the
model is loaded (and its load time printed) before any timing starts.
Before the timed runs, one file of each format is ingested into a throwaway
knowledge base, so one-time costs (imports, the tokenizer dictionary) do not
land on the first format. Corpus generation is not timed as ingest. On a shared machine run-to-run
noise is large; ``--repeat R`` ingests each folder into R fresh knowledge
bases and reports the median run (by ``ingest s``). Examples::

    python benchmarks/bench_ingest_formats.py --files 100
    python benchmarks/bench_ingest_formats.py --files 200 --embedder use --metadata mapping
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import yaml

from veracity.index.dense import Embedder
from veracity.index.embedders import FakeEmbedder, make_embedder
from veracity.ingest.run import IngestReport, ingest_paths
from veracity.kb.directory import create_kb
from veracity.testing.pdf_builder import PdfLine, build_pdf

FORMATS = ("markdown", "text", "html", "pdf", "docx")
SUFFIX = {"markdown": ".md", "text": ".txt", "html": ".html", "pdf": ".pdf", "docx": ".docx"}
SIDECAR_FORMATS = frozenset({"text", "pdf", "docx"})
TENANT = "bench"
ROLES = ("public", "support")
STAGES = ("parse", "chunk", "catalog", "tokenize", "write", "embed")

# -- corpus -------------------------------------------------------------------

PRODUCTS = ("星舰网关", "数据管道", "身份服务", "消息队列", "对象存储", "监控平台")
TOPICS = ("超时与重试", "连接池", "证书轮换", "限流策略", "日志采集", "灰度发布", "备份恢复", "权限模型")
ZH_SENTENCES = (
    "{product}默认超时为 {n} 秒，可以通过配置项 {param} 修改。",
    "升级到 {version} 之前，请先排空现有连接并备份配置文件。",
    "当错误码 {code} 出现时，通常说明上游服务没有在规定时间内响应。",
    "{product}会在每次重启后重新读取 {param}，无需额外操作。",
    "生产环境建议把 {param} 设置为 {n}，并开启审计日志。",
    "如果监控显示延迟持续升高，应先检查连接池是否耗尽。",
    "该功能从 {version} 版本开始提供，旧版本需要手动启用。",
    "运维人员可以在控制台的“{topic}”页面查看当前状态。",
    "证书到期前 {n} 天，系统会自动发送提醒邮件给管理员。",
    "多租户部署时，每个租户的 {param} 相互独立，互不影响。",
)
EN_SENTENCES = (
    "The {product} gateway retries a failed request at most {n} times before giving up.",
    "Set {param} to {n} in production and keep the audit log enabled.",
    "Error {code} means the upstream service did not answer within the timeout.",
    "Version {version} changed the default of {param}; check your overrides after upgrading.",
    "Operators can inspect the {topic} page in the console to see the current state.",
    "Drain open connections before restarting a node, otherwise clients see resets.",
    "Each tenant keeps its own copy of {param}, so a change never leaks across tenants.",
    "Rotate certificates at least {n} days before they expire.",
)


@dataclass(frozen=True, slots=True)
class Section:
    heading: str
    paragraphs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Doc:
    """One generated document, independent of its file format."""

    stem: str
    title: str
    sections: tuple[Section, ...]
    table: tuple[tuple[str, ...], ...]  # first row is the header
    metadata: dict[str, Any]


def _fill(template: str, rng: random.Random, product: str, topic: str) -> str:
    return template.format(
        product=product,
        topic=topic,
        n=rng.choice((3, 5, 10, 30, 60, 120)),
        param=f"{rng.choice(('gateway', 'pool', 'tls', 'queue', 'audit'))}."
        f"{rng.choice(('timeout', 'max_size', 'retries', 'interval', 'level'))}_{rng.randint(1, 99)}",
        version=f"v{rng.randint(2, 4)}.{rng.randint(0, 9)}",
        code=f"E{rng.randint(1000, 9999)}",
    )


def _paragraph(rng: random.Random, product: str, topic: str) -> str:
    sentences = [_fill(rng.choice(ZH_SENTENCES), rng, product, topic) for _ in range(rng.randint(2, 4))]
    sentences += [_fill(rng.choice(EN_SENTENCES), rng, product, topic) for _ in range(rng.randint(1, 2))]
    rng.shuffle(sentences)
    return " ".join(sentences)


def make_doc(index: int, seed: int) -> Doc:
    """Document ``index`` of the corpus: same seed and index, same document in every format."""
    rng = random.Random(seed * 1_000_003 + index)
    product = rng.choice(PRODUCTS)
    topics = rng.sample(TOPICS, 2)
    sections = tuple(
        Section(
            f"{topic} ({'Timeouts' if n == 0 else 'Operations'} {index})",
            tuple(_paragraph(rng, product, topic) for _ in range(rng.randint(2, 3))),
        )
        for n, topic in enumerate(topics)
    )
    rows = tuple(
        (
            f"{product[:2]}.param_{index}_{row}",
            str(rng.choice((3, 10, 30, 256))),
            rng.choice(("重启后生效 (restart)", "立即生效 (live)", "仅限测试 (test only)")),
        )
        for row in range(rng.randint(2, 4))
    )
    table = (("参数 Parameter", "默认值 Default", "说明 Notes"), *rows)
    internal = rng.random() < 0.3
    metadata: dict[str, Any] = {
        "id": f"doc-{index:05d}",
        "revision": "1",
        "title": f"{product}手册 {index}: {topics[0]} Guide",
        "tenant": TENANT,
        "valid_from": "2026-01-01",
        "status": "active",
        "visibility": "internal" if internal else "public",
        "trust": rng.choice(("official", "official", "community")),
        "version_min": "3.0",
        "version_max": "3.9",
    }
    if internal:
        metadata["allowed_roles"] = ["support"]
    return Doc(f"doc-{index:05d}", metadata["title"], sections, table, metadata)


# -- writers --------------------------------------------------------------------


def _yaml(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


def write_markdown(doc: Doc, path: Path) -> None:
    lines = ["---", _yaml(doc.metadata).rstrip(), "---", "", f"# {doc.title}", ""]
    for number, section in enumerate(doc.sections):
        lines += [f"## {section.heading}", ""]
        for paragraph in section.paragraphs:
            lines += [paragraph, ""]
        if number == 0:
            header, *rows = doc.table
            lines.append("| " + " | ".join(header) + " |")
            lines.append("|" + "---|" * len(header))
            lines += ["| " + " | ".join(row) + " |" for row in rows]
            lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")


def write_text(doc: Doc, path: Path) -> None:
    parts = [doc.title]
    for section in doc.sections:
        parts.append(section.heading)
        parts.extend(section.paragraphs)
    path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")


def write_html(doc: Doc, path: Path) -> None:
    metas = []
    for key, value in doc.metadata.items():
        content = ",".join(value) if isinstance(value, list) else str(value)
        metas.append(f'<meta name="veracity:{key}" content="{escape(content)}">')
    body = [f"<h1>{escape(doc.title)}</h1>"]
    for number, section in enumerate(doc.sections):
        body.append(f"<h2>{escape(section.heading)}</h2>")
        body += [f"<p>{escape(paragraph)}</p>" for paragraph in section.paragraphs]
        if number == 0:
            header, *rows = doc.table
            cells = ["<tr>" + "".join(f"<th>{escape(c)}</th>" for c in header) + "</tr>"]
            cells += ["<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows]
            body.append("<table>" + "".join(cells) + "</table>")
    page = (
        '<!doctype html><html lang="zh"><head><meta charset="utf-8">'
        f"<title>{escape(doc.title)}</title>{''.join(metas)}</head>"
        "<body><nav>首页 | Home | 登录</nav><main>"
        + "\n".join(body)
        + "</main><footer>© 2026 Bench</footer><script>track()</script></body></html>"
    )
    path.write_text(page, encoding="utf-8")


def write_docx(doc: Doc, path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_heading(doc.title, level=1)
    for number, section in enumerate(doc.sections):
        document.add_heading(section.heading, level=2)
        for paragraph in section.paragraphs:
            document.add_paragraph(paragraph)
        if number == 0:
            table = document.add_table(rows=len(doc.table), cols=len(doc.table[0]))
            for r, row in enumerate(doc.table):
                for c, text in enumerate(row):
                    table.cell(r, c).text = text
    document.save(str(path))


# PDF: the layout (wrapping, paging) is done here; the file itself is written by
# veracity.testing.pdf_builder, every line in its Type0 font (cjk=True) so that
# mixed Chinese/English text extracts.

_PDF_TOKEN = re.compile(r"[A-Za-z0-9_.:/()\-]+|\s|.")
PDF_BODY, PDF_H1, PDF_H2 = 11.0, 18.0, 14.0
PDF_TOP, PDF_BOTTOM, PDF_WIDTH_PT = 740.0, 72.0, 468.0


def _wrap(text: str, size: float) -> list[str]:
    """Break ``text`` into lines that fit the page (CJK 1 em, other characters 0.5 em)."""
    limit = PDF_WIDTH_PT / size
    lines: list[str] = []
    current, width = "", 0.0
    for token in _PDF_TOKEN.findall(text):
        token_width = sum(1.0 if ord(c) > 0x2E7F else 0.5 for c in token)
        if current and width + token_width > limit:
            lines.append(current.rstrip())
            current, width = "", 0.0
            if token.isspace():
                continue
        current += token
        width += token_width
    if current.strip():
        lines.append(current.rstrip())
    return lines


def pdf_pages(doc: Doc) -> list[list[PdfLine]]:
    """The lines of ``doc`` placed on pages: headings larger than the body, a gap between paragraphs."""
    layout: list[tuple[float, str, float]] = [(PDF_H1, doc.title, PDF_H1 * 2.2)]
    for section in doc.sections:
        layout.append((PDF_H2, section.heading, PDF_H2 * 2.2))
        for paragraph in section.paragraphs:
            wrapped = _wrap(paragraph, PDF_BODY)
            layout += [(PDF_BODY, line, PDF_BODY * 1.3) for line in wrapped[:-1]]
            layout.append((PDF_BODY, wrapped[-1], PDF_BODY * 2.4))  # gap > 1.6x: new paragraph
    pages: list[list[PdfLine]] = [[]]
    y = PDF_TOP
    for size, text, advance in layout:
        if y < PDF_BOTTOM:
            pages.append([])
            y = PDF_TOP
        pages[-1].append((size, text, round(y, 1)))
        y -= advance
    return pages


def write_pdf(doc: Doc, path: Path) -> None:
    path.write_bytes(build_pdf(pdf_pages(doc), cjk=True))


WRITERS: dict[str, Callable[[Doc, Path], None]] = {
    "markdown": write_markdown,
    "text": write_text,
    "html": write_html,
    "pdf": write_pdf,
    "docx": write_docx,
}


def generate(fmt: str, folder: Path, files: int, seed: int, metadata_mode: str) -> Path | None:
    """Write ``files`` documents of ``fmt`` into ``folder``; return the mapping file, if one."""
    folder.mkdir(parents=True, exist_ok=True)
    mapping: dict[str, dict[str, Any]] = {}
    for index in range(files):
        doc = make_doc(index, seed)
        path = folder / (doc.stem + SUFFIX[fmt])
        WRITERS[fmt](doc, path)
        if fmt in SIDECAR_FORMATS:
            if metadata_mode == "sidecar":
                sidecar = path.with_name(path.name + ".meta.yaml")
                sidecar.write_text(_yaml(doc.metadata), encoding="utf-8")
            else:
                mapping[path.name] = doc.metadata
    if not mapping:
        return None
    mapping_file = folder.parent / f"{fmt}-metadata.yaml"
    mapping_file.write_text(_yaml(mapping), encoding="utf-8")
    return mapping_file


# -- measurement ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    fmt: str
    files: int
    generate_seconds: float
    wall_seconds: float
    report: IngestReport

    @property
    def ingest_seconds(self) -> float:
        return sum(v for k, v in self.report.seconds.items() if k != "embed")

    def per_second(self, count: int) -> float:
        return count / self.ingest_seconds if self.ingest_seconds > 0 else 0.0


def load_average() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "n/a"
    return f"{one:.2f} {five:.2f} {fifteen:.2f} (1/5/15 min, {os.cpu_count()} CPUs)"


def make_kb_embedder(name: str) -> Embedder:
    return FakeEmbedder() if name == "fake" else make_embedder(name)


def warm_up(formats: Sequence[str], root: Path, args: argparse.Namespace) -> None:
    """Ingest one file of each format into a throwaway knowledge base, untimed.

    One-time costs (parser imports, the tokenizer's dictionary, SQLite
    extensions) would otherwise all land on whichever format runs first.
    """
    source = root / "warm-up"
    for fmt in formats:
        generate(fmt, source / fmt, 1, args.seed + 1, "sidecar")
    kb = create_kb(root / "kb-warm-up", make_kb_embedder(args.embedder))
    try:
        ingest_paths(kb, [source], tenant=TENANT, roles=ROLES)
    finally:
        kb.catalog.store.close()


def run_format(fmt: str, root: Path, args: argparse.Namespace) -> Row:
    source = root / fmt
    start = time.perf_counter()
    mapping_file = generate(fmt, source, args.files, args.seed, args.metadata)
    generated = time.perf_counter() - start
    runs = []
    for attempt in range(args.repeat):
        kb = create_kb(root / f"kb-{fmt}-{attempt + 1}", make_kb_embedder(args.embedder))
        try:
            start = time.perf_counter()
            report = ingest_paths(kb, [source], tenant=TENANT, roles=ROLES, metadata_file=mapping_file)
            wall = time.perf_counter() - start
        finally:
            kb.catalog.store.close()
        runs.append(Row(fmt, args.files, generated, wall, report))
    runs.sort(key=lambda row: row.ingest_seconds)
    return runs[(len(runs) - 1) // 2]  # the median run (the lower one for an even count)


def print_tables(rows: Sequence[Row]) -> None:
    print("| format | files | added | rejected | chunks | wall s | ingest s | embed s | files/s | chunks/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        r = row.report
        print(
            f"| {row.fmt} | {row.files} | {len(r.added)} | {len(r.rejected)} | {r.chunks_added} "
            f"| {row.wall_seconds:.2f} | {row.ingest_seconds:.2f} | {r.seconds.get('embed', 0.0):.2f} "
            f"| {row.per_second(len(r.added)):.1f} | {r.chunks_per_second_without_embedding:.1f} |"
        )
    print()
    print("Stage seconds (ingest s = all but embed; wall s also holds file listing and commits):")
    print()
    print("| format | generate s | " + " | ".join(STAGES) + " |")
    print("|---|---:|" + "---:|" * len(STAGES))
    for row in rows:
        stages = " | ".join(f"{row.report.seconds.get(name, 0.0):.3f}" for name in STAGES)
        print(f"| {row.fmt} | {row.generate_seconds:.2f} | {stages} |")
    for row in rows:
        for source, reason in row.report.rejected[:3]:
            print(f"rejected ({row.fmt}) {source}: {reason}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=200, help="documents per format (default 200)")
    parser.add_argument(
        "--workdir",
        type=Path,
        help="where to write corpora and knowledge bases "
        "(a new empty folder; default: a temporary folder, deleted afterwards)",
    )
    parser.add_argument(
        "--embedder",
        choices=("fake", "use"),
        default="fake",
        help="fake: measure ingest without a model (default); use: real embedding, timed apart",
    )
    parser.add_argument(
        "--metadata",
        choices=("sidecar", "mapping"),
        default="sidecar",
        help="metadata for text/pdf/docx: a sidecar per file, or one mapping file",
    )
    parser.add_argument(
        "--formats", default=",".join(FORMATS), help=f"comma-separated subset of {','.join(FORMATS)}"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="ingest each folder into this many fresh knowledge bases; report the median run",
    )
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        parser.error(f"unknown formats {unknown}; valid: {','.join(FORMATS)}")
    if args.files < 1 or args.repeat < 1:
        parser.error("--files and --repeat must be at least 1")
    if args.workdir is not None and args.workdir.exists() and any(args.workdir.iterdir()):
        parser.error(f"--workdir {args.workdir} is not empty")

    print(
        f"# veracity ingest benchmark: {args.files} files per format, embedder {args.embedder}, "
        f"metadata {args.metadata}, median of {args.repeat} run(s) per format"
    )
    print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
    print(f"load average before: {load_average()}")
    if args.embedder != "fake":
        start = time.perf_counter()
        make_kb_embedder(args.embedder).embed_batch(["warm up 预热"])
        print(f"{args.embedder} model load + warm-up: {time.perf_counter() - start:.2f} s (not in the table)")
    print()

    root = args.workdir or Path(tempfile.mkdtemp(prefix="veracity-bench-ingest-"))
    rows: list[Row] = []
    try:
        warm_up(formats, root, args)
        for fmt in formats:
            rows.append(run_format(fmt, root, args))
            print(f"{fmt}: done", file=sys.stderr, flush=True)
    finally:
        if args.workdir is None:
            shutil.rmtree(root, ignore_errors=True)
    print_tables(rows)
    print()
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
