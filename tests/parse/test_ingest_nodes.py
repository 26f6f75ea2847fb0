"""The canonical Markdown rendering: escapes, fences, tables, and the offset property."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veracity.parse.nodes import Block, ListItem, NodeKind, assemble


def test_paragraph_lines_that_look_like_markup_are_escaped(consistent: Callable[..., None]) -> None:
    text = "# a\n| b\n- c\n12. d\n```e\n> f\n---\nplain - text"
    parsed = assemble([Block(NodeKind.PARAGRAPH, text)])
    assert parsed.body == "\\# a\n\\| b\n\\- c\n12\\. d\n\\```e\n\\> f\n\\---\nplain - text"
    consistent(parsed)


def test_code_fence_is_longer_than_any_backtick_run_inside() -> None:
    parsed = assemble([Block(NodeKind.CODE, "a\n````\nb", language="py")])
    assert parsed.body == "`````py\na\n````\nb\n`````"


def test_code_language_is_nfc_like_the_body(consistent: Callable[..., None]) -> None:
    parsed = assemble([Block(NodeKind.CODE, "0", language="\uf900")])  # a compatibility ideograph
    assert parsed.body == "```\u8c48\n0\n```"
    consistent(parsed)


def test_table_pads_rows_and_escapes_pipes() -> None:
    parsed = assemble([Block(NodeKind.TABLE, header=("k", "v"), rows=(("a|b",), ("c", "d", "e")))])
    assert parsed.body.splitlines() == [
        "| k | v |  |",
        "| --- | --- | --- |",
        "| a\\|b |  |  |",
        "| c | d | e |",
    ]
    assert parsed.nodes[0].header == ("k", "v", "")


def test_list_depth_never_jumps_and_numbers_count_per_level() -> None:
    items = (ListItem("a", 2, True), ListItem("b", 3), ListItem("c", 0, True), ListItem("", 0))
    assert assemble([Block(NodeKind.LIST, items=items)]).body == "1. a\n    - b\n2. c"


def test_heading_trailing_hashes_are_kept_as_text() -> None:
    parsed = assemble([Block(NodeKind.HEADING, "Issue #", level=2), Block(NodeKind.PARAGRAPH, "x")])
    assert parsed.body.startswith("## Issue \\#\n")
    assert parsed.nodes[1].heading_path == ("Issue \\#",)


def test_empty_blocks_are_dropped() -> None:
    parsed = assemble([Block(NodeKind.PARAGRAPH, " \n "), Block(NodeKind.TABLE), Block(NodeKind.CODE, "\n")])
    assert parsed.body == "" and parsed.nodes == ()


_BLOCKS = st.one_of(
    st.builds(lambda t, n: Block(NodeKind.HEADING, t, level=n), st.text(max_size=20), st.integers(-1, 8)),
    st.builds(lambda t, c: Block(NodeKind.PARAGRAPH, t, collapse=c), st.text(max_size=40), st.booleans()),
    st.builds(
        lambda t, lang: Block(NodeKind.CODE, t, language=lang), st.text(max_size=40), st.text(max_size=4)
    ),
    st.builds(
        lambda items: Block(NodeKind.LIST, items=tuple(items)),
        st.lists(st.builds(ListItem, st.text(max_size=10), st.integers(-1, 4), st.booleans()), max_size=5),
    ),
    st.builds(
        lambda header, rows: Block(NodeKind.TABLE, header=tuple(header), rows=tuple(map(tuple, rows))),
        st.lists(st.text(max_size=6), max_size=3),
        st.lists(st.lists(st.text(max_size=6), max_size=3), max_size=3),
    ),
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(blocks=st.lists(_BLOCKS, max_size=8))
def test_any_blocks_render_to_a_normalized_body_the_chunker_reads_the_same_way(
    blocks: list[Block], consistent: Callable[..., None]
) -> None:
    consistent(assemble(blocks))
