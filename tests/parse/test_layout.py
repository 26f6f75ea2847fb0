"""Page geometry and structure from positioned words: lines, columns, running lines, headings, boxes."""

from __future__ import annotations

from veracity.parse.layout import Line, PageText, Word, group_lines, reading_order, remove_running_lines
from veracity.parse.nodes import NodeKind, assemble
from veracity.parse.structure import layout_blocks, ocr_numbers


def words(text: str, x: float, top: float, size: float = 10, **extra: object) -> list[Word]:
    """``text``'s words set from ``x`` on one line at ``top``, 6 units per character."""
    placed = []
    for token in text.split():
        placed.append(Word(token, x, top, x + 6 * len(token), top + size, size, **extra))  # type: ignore[arg-type]
        x += 6 * len(token) + 4
    return placed


def texts(items: list[object]) -> list[str]:
    return [item.text for item in items if isinstance(item, Line)]


def test_words_on_one_baseline_form_a_line_with_spaces() -> None:
    lines = group_lines(words("run the upgrade tool", 50, 100), 1)
    assert texts(lines) == ["run the upgrade tool"]  # type: ignore[arg-type]


def test_chinese_characters_join_without_spaces() -> None:
    tight = [Word(c, 50 + 10 * i, 100, 60 + 10 * i, 110, 10) for i, c in enumerate("单点登录")]
    assert texts(group_lines(tight, 1)) == ["单点登录"]  # type: ignore[arg-type]


def test_two_columns_read_left_column_first() -> None:
    left = [f"left paragraph line {n}" for n in range(1, 5)]
    right = [f"right paragraph line {n}" for n in range(1, 5)]
    placed = words("A Title Across Both Columns", 50, 40, 16)
    for n, (a, b) in enumerate(zip(left, right, strict=True)):
        placed += words(a, 50, 100 + 14 * n) + words(b, 320, 100 + 14 * n)
    placed += words("a footnote across the whole page width, under both columns", 50, 300)
    ordered = texts(reading_order(group_lines(placed, 1)))  # type: ignore[arg-type]
    assert ordered == ["A Title Across Both Columns", *left, *right,
                       "a footnote across the whole page width, under both columns"]  # fmt: skip


def test_a_single_column_is_read_top_to_bottom() -> None:
    placed = words("second line", 50, 120) + words("first line", 50, 100)
    assert texts(reading_order(group_lines(placed, 1))) == ["first line", "second line"]  # type: ignore[arg-type]


def _page(number: int, body: str) -> PageText:
    placed = (
        words("Starship Manual confidential", 50, 20)
        + words(body, 50, 300)
        + words(f"Page {number} of 3", 50, 770)
    )
    return PageText(number, 600, 800, tuple(placed), lines=tuple(group_lines(placed, number)))


def test_running_headers_and_footers_are_removed_and_counted() -> None:
    pages = [_page(n, f"body text of page {n}") for n in (1, 2, 3)]
    kept, removed = remove_running_lines(pages)
    assert removed == 6
    assert [[line.text for line in page.lines] for page in kept] == [
        [f"body text of page {n}"] for n in (1, 2, 3)
    ]


def test_a_line_on_one_page_only_is_kept() -> None:
    pages = [_page(1, "body"), PageText(2, 600, 800, tuple(words("other body", 50, 300)))]
    pages[1] = PageText(2, 600, 800, pages[1].words, lines=tuple(group_lines(pages[1].words, 2)))
    _, removed = remove_running_lines(pages)
    assert removed == 0  # present on one page of two: not "most pages, at least two"


def test_structure_headings_by_size_and_weight_and_boxes_on_every_node() -> None:
    placed = (
        words("Install Guide", 50, 40, 20)
        + words("Set up the agent on a new machine today.", 50, 80)
        + words("Requirements", 50, 120, 10, bold=True)
        + words("You need Python 3.11 or newer.", 50, 140)
    )
    blocks, removed = layout_blocks([PageText(1, 600, 800, tuple(placed))])
    parsed = assemble(blocks)
    assert removed == 0
    assert [(n.kind, n.heading_path[-1] if n.heading_path else "") for n in parsed.nodes] == [
        (NodeKind.HEADING, "Install Guide"),
        (NodeKind.PARAGRAPH, "Install Guide"),
        (NodeKind.HEADING, "Requirements"),
        (NodeKind.PARAGRAPH, "Requirements"),
    ]
    assert [n.level for n in parsed.nodes if n.kind is NodeKind.HEADING] == [1, 2]
    for node in parsed.nodes:
        assert node.page == 1 and node.bbox is not None and node.bbox.page == 1
        assert 0 <= node.bbox.x0 < node.bbox.x1 <= 1 and 0 <= node.bbox.top < node.bbox.bottom <= 1
    first = parsed.nodes[1].bbox
    assert first is not None and (first.x0, first.top) == (round(50 / 600, 4), round(80 / 800, 4))


def test_no_text_is_lost_to_a_heading_that_heads_nothing_or_a_sentence_set_large() -> None:
    placed = (
        words("Lyra Lamp", 50, 40, 20)
        + words("The lamp weighs 1.2 kilograms.", 50, 80)
        + words("The battery lasts 28 minutes per charge.", 50, 120, 14)  # OCR misread its height
        + words("Support hotline 800-555-0142", 50, 160, 16, bold=True)  # the last line: heads nothing
    )
    parsed = assemble(layout_blocks([PageText(1, 600, 800, tuple(placed))])[0])
    assert [(n.kind, n.text) for n in parsed.nodes] == [
        (NodeKind.HEADING, "# Lyra Lamp"),
        (NodeKind.PARAGRAPH, "The lamp weighs 1.2 kilograms."),
        (NodeKind.PARAGRAPH, "The battery lasts 28 minutes per charge."),
        (NodeKind.PARAGRAPH, "Support hotline 800-555-0142"),
    ]
    assert all(n.heading_path == ("Lyra Lamp",) for n in parsed.nodes)


def test_a_chinese_line_wrapped_by_the_page_runs_on_and_a_latin_one_keeps_its_break() -> None:
    placed = (
        words("天琴台", 50, 80) + words("灯的质保期为两年。", 50, 92)
        + words("The lamp is", 50, 130) + words("warranted.", 50, 142)
    )  # fmt: skip
    parsed = assemble(layout_blocks([PageText(1, 600, 800, tuple(placed))])[0])
    assert [n.text for n in parsed.nodes] == ["天琴台灯的质保期为两年。", "The lamp is\nwarranted."]


def test_ocr_words_give_nodes_their_confidence_and_numbers() -> None:
    placed = words("The Team plan costs $12.50 per seat.", 50, 80, confidence=0.8)
    blocks, _ = layout_blocks([PageText(1, 600, 800, tuple(placed), source="ocr")])
    (node,) = assemble(blocks).nodes
    assert (node.source, node.confidence) == ("ocr", 0.8)
    assert [(n.text, n.confidence) for n in node.ocr_numbers] == [("$12.50", 0.8)]
    assert ocr_numbers(group_lines(words("no numbers", 0, 0, confidence=0.5), 1)[0]) == ()
