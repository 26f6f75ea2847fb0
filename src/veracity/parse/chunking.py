"""Cut a document body into chunks: fixed windows, Markdown structure, or structure + context.

Every chunk is an exact slice of the normalized body: ``body[start:end] == text``.
Outer whitespace is dropped by moving the offsets, never by editing the text, and
whitespace-only spans are never chunks.

- ``fixed``: character windows of ``size`` advancing by ``size - overlap``; a window
  whose stripped span lies inside the previous one is dropped.
- ``structural``: the body is parsed line-wise (:mod:`veracity.parse.blocks`) into
  headings, paragraphs, lists, tables and fenced code. Headings set the heading
  path and never appear in chunk text. Consecutive blocks of one section are
  grouped up to ``size`` characters;
  tables and code stay whole, unless ``max_block`` is given and they are longer:
  then a table is cut between rows and code between lines into pieces of at
  most ``size`` (a single row or line longer than that stays one piece; see
  :func:`oversize_chunks`); an over-long paragraph or list is split at
  sentence ends (a sentence longer than ``size`` is cut at ``size``).
- ``contextual``: the structural chunks, each with a ``context_prefix`` naming the
  document title, version range and heading path (and, for the second and later
  pieces of a cut table, its header row); text and ids are unchanged.

``chunk_id`` hashes the document id, heading path, ordinal and the identity form
of the text, so it is stable across runs and changes when the chunk text does.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from ..model.contracts import Chunk, ChunkKind, Document, parse_enum, sha256_hex
from ..model.errors import ValidationError
from ..model.versions import PREFIX_RANGE, range_label
from ..text.normalize import identity_text
from ..text.sentences import split_sentences
from .blocks import FENCE_OPEN, MarkdownBlock, block_spans, parse_blocks

__all__ = [
    "Strategy",
    "block_spans",
    "chunk_document",
    "chunk_id_for",
    "context_prefix",
    "fact_chunk_map",
    "oversize_chunks",
    "parse_strategy",
    "with_context",
]


class Strategy(StrEnum):
    """How a document body is cut into chunks."""

    FIXED = "fixed"
    STRUCTURAL = "structural"
    CONTEXTUAL = "contextual"


def parse_strategy(text: object) -> Strategy:
    """Parse a strategy name; raise ``ConfigError`` listing the valid values otherwise."""
    return parse_enum(Strategy, text, what="chunking strategy")


def _strip_span(body: str, start: int, end: int) -> tuple[int, int]:
    while start < end and body[start].isspace():
        start += 1
    while end > start and body[end - 1].isspace():
        end -= 1
    return start, end


def chunk_id_for(document_id: str, heading_path: Sequence[str], ordinal: int, text: str) -> str:
    """The deterministic chunk id: hash of document id, heading path, ordinal and text identity."""
    parts = [document_id, " > ".join(heading_path), str(ordinal), sha256_hex(identity_text(text))]
    return sha256_hex("\x1f".join(parts))


def context_prefix(document: Document, heading_path: Sequence[str]) -> str:
    """``"{title} | 版本 {range} | {heading > path}"``: the context a contextual chunk carries."""
    versions = range_label(document.version_min, document.version_max, PREFIX_RANGE)
    return f"{document.title} | 版本 {versions} | {' > '.join(heading_path)}"


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    kind: ChunkKind
    path: tuple[str, ...]
    lead: str = ""  # a cut table's header row, for the context prefix of its later pieces


def _validate(size: int, overlap: int) -> None:
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ValidationError(f"chunk size must be a positive integer, got {size!r}", field="size")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
        raise ValidationError(
            f"chunk overlap must be a non-negative integer, got {overlap!r}", field="overlap"
        )
    if overlap >= size:
        raise ValidationError(
            f"chunk overlap {overlap} must be smaller than size {size}; lower the overlap",
            field="overlap",
        )


def _window_kind(
    blocks: Sequence[MarkdownBlock], starts: Sequence[int], start: int, end: int
) -> ChunkKind:
    """The kind covering more than half of ``[start, end)``, else ``MIXED``."""
    cover: dict[ChunkKind, int] = {}
    index = max(0, bisect.bisect_right(starts, start) - 1)
    while index < len(blocks) and blocks[index].start < end:
        block = blocks[index]
        shared = min(end, block.end) - max(start, block.start)
        if block.kind is not None and shared > 0:
            cover[block.kind] = cover.get(block.kind, 0) + shared
        index += 1
    if not cover:
        return ChunkKind.PARAGRAPH
    kind, covered = max(cover.items(), key=lambda item: (item[1], item[0].value))
    return kind if covered * 2 > end - start else ChunkKind.MIXED


def _fixed_spans(body: str, size: int, overlap: int) -> list[_Span]:
    blocks = parse_blocks(body)
    starts = [block.start for block in blocks]
    spans: list[_Span] = []
    step = size - overlap
    position = 0
    while position < len(body):
        start, end = _strip_span(body, position, min(position + size, len(body)))
        covered = bool(spans) and spans[-1].start <= start and end <= spans[-1].end
        if end > start and not covered:
            at = bisect.bisect_right(starts, start) - 1
            path = blocks[at].path if at >= 0 else ()
            spans.append(_Span(start, end, _window_kind(blocks, starts, start, end), path))
        if position + size >= len(body):
            break
        position += step
    return spans


def _cut_long(body: str, block: MarkdownBlock, size: int) -> Iterable[_Span]:
    """Split an over-long paragraph or list into sentence spans, cutting sentences over ``size``."""
    assert block.kind is not None
    for begin, finish in split_sentences(body[block.start : block.end]):
        begin, finish = begin + block.start, finish + block.start
        for cut in range(begin, finish, size):
            start, end = _strip_span(body, cut, min(cut + size, finish))
            if end > start:
                yield _Span(start, end, block.kind, block.path)


def _cut_lines(body: str, block: MarkdownBlock, start: int, end: int, size: int) -> Iterable[_Span]:
    """Cut a table between rows or code between lines into pieces of at most ``size``.

    A table's header and rule stay in its first piece; a code block's fences
    stay with the line next to them, so no piece is a fence alone.
    """
    assert block.kind is not None
    lines: list[tuple[int, int]] = []
    position = start
    for text in body[start:end].split("\n"):
        lines.append((position, position + len(text)))
        position += len(text) + 1
    table = block.kind is ChunkKind.TABLE
    head = lines[:2] if table else lines[:1]
    closed = not table and len(lines) > 1 and bool(FENCE_OPEN.match(body[lines[-1][0] : lines[-1][1]]))
    rest = lines[len(head) : len(lines) - 1 if closed else len(lines)]
    pieces: list[list[tuple[int, int]]] = [list(head)]
    for line in rest:
        if len(pieces[-1]) > (len(head) if len(pieces) == 1 else 0) and line[1] - pieces[-1][0][0] > size:
            pieces.append([])
        pieces[-1].append(line)
    if closed:
        pieces[-1].append(lines[-1])
    header = body[lines[0][0] : lines[0][1]].strip() if table else ""
    for number, piece in enumerate(pieces):
        begin, finish = _strip_span(body, piece[0][0], piece[-1][1])
        if finish > begin:
            yield _Span(begin, finish, block.kind, block.path, header if number else "")


def _units(
    body: str, blocks: Sequence[MarkdownBlock], size: int, max_block: int | None = None
) -> Iterable[tuple[int, _Span]]:
    """Non-heading blocks as ``(section, span)``; long paragraphs and lists (and, over
    ``max_block``, tables and code) pre-split."""
    for block in blocks:
        if block.kind is None:
            continue
        start, end = _strip_span(body, block.start, block.end)
        if end <= start:
            continue
        if end - start > size and block.kind in (ChunkKind.PARAGRAPH, ChunkKind.LIST):
            for piece in _cut_long(body, block, size):
                yield block.section, piece
        elif max_block is not None and end - start > max_block:
            for piece in _cut_lines(body, block, start, end, size):
                yield block.section, piece
        else:
            yield block.section, _Span(start, end, block.kind, block.path)


def _group_kind(kinds: Sequence[ChunkKind]) -> ChunkKind:
    distinct = set(kinds)
    return kinds[0] if len(distinct) == 1 else ChunkKind.MIXED


def _structural_spans(body: str, size: int, max_block: int | None = None) -> list[_Span]:
    spans: list[_Span] = []
    group: list[_Span] = []
    group_section = -1

    def flush() -> None:
        if group:
            kind = _group_kind([unit.kind for unit in group])
            spans.append(_Span(group[0].start, group[-1].end, kind, group[0].path, group[0].lead))
            group.clear()

    for section, unit in _units(body, parse_blocks(body), size, max_block):
        if group and (section != group_section or unit.end - group[0].start > size):
            flush()
        if not group:
            group_section = section
        group.append(unit)
    flush()
    return spans


def _chunks(document: Document, spans: Sequence[_Span], *, with_context: bool) -> tuple[Chunk, ...]:
    chunks: list[Chunk] = []
    for ordinal, span in enumerate(spans):
        text = document.body[span.start : span.end]
        chunks.append(
            Chunk(
                chunk_id=chunk_id_for(document.document_id, span.path, ordinal, text),
                document_id=document.document_id,
                document_digest=document.content_digest,
                heading_path=span.path,
                ordinal=ordinal,
                start=span.start,
                end=span.end,
                kind=span.kind,
                text=text,
                context_prefix=_prefix(document, span) if with_context else "",
                fact_ids=tuple(
                    fact.fact_id
                    for fact in document.facts
                    if fact.stance == "supports" and fact.quote in text
                ),
            )
        )
    return tuple(chunks)


def _prefix(document: Document, span: _Span) -> str:
    prefix = context_prefix(document, span.path)
    return f"{prefix} | {span.lead}" if span.lead else prefix


def chunk_document(
    document: Document,
    strategy: Strategy | str = Strategy.STRUCTURAL,
    *,
    size: int = 400,
    overlap: int = 0,
    max_block: int | None = None,
) -> tuple[Chunk, ...]:
    """Cut ``document.body`` into chunks with ``strategy``.

    ``size`` is the character budget of a chunk (fixed windows are exactly that
    long before stripping; structural chunks exceed it only for a table or code
    block that is larger on its own). ``max_block``: a table or code block
    longer than this is cut into pieces of at most ``size`` (between rows or
    lines); ``None`` keeps them whole. ``overlap`` applies to fixed windows only.
    Raises ``ValidationError`` for ``size <= 0``, ``overlap < 0`` or
    ``overlap >= size`` and ``ConfigError`` for an unknown strategy.
    """
    chosen = parse_strategy(strategy)
    _validate(size, overlap)
    if chosen is Strategy.FIXED:
        return _chunks(document, _fixed_spans(document.body, size, overlap), with_context=False)
    spans = _structural_spans(document.body, size, max_block)
    return _chunks(document, spans, with_context=chosen is Strategy.CONTEXTUAL)


def with_context(document: Document, chunks: Iterable[Chunk]) -> tuple[Chunk, ...]:
    """Return ``chunks`` of ``document`` with their ``context_prefix`` set (text and ids kept)."""
    return tuple(
        replace(chunk, context_prefix=context_prefix(document, chunk.heading_path))
        for chunk in chunks
    )


def fact_chunk_map(chunks: Iterable[Chunk]) -> dict[str, tuple[str, ...]]:
    """Fact id → ids of the chunks carrying its whole quote, in chunk order.

    Facts that no chunk carries whole are absent from the map.
    """
    found: dict[str, list[str]] = {}
    for chunk in chunks:
        for fact_id in chunk.fact_ids:
            found.setdefault(fact_id, []).append(chunk.chunk_id)
    return {fact_id: tuple(ids) for fact_id, ids in found.items()}


CHUNK_SIZE = 400
"""Character budget of the chunks a document is indexed as."""
HARD_LIMIT_FACTOR = 2
"""No indexed chunk is longer than this many budgets, except one table row or code line."""


def chunk_for_index(document: Document) -> tuple[Chunk, ...]:
    """The chunks a document is indexed as: structural chunks with their context prefix.

    Tables and code longer than twice the budget are cut between rows and lines.
    """
    return chunk_document(
        document, Strategy.CONTEXTUAL, size=CHUNK_SIZE, max_block=HARD_LIMIT_FACTOR * CHUNK_SIZE
    )


def oversize_chunks(chunks: Iterable[Chunk], size: int = CHUNK_SIZE) -> int:
    """Chunks longer than twice ``size``: each is one table row or code line that cannot be cut."""
    return sum(len(chunk.text) > HARD_LIMIT_FACTOR * size for chunk in chunks)
