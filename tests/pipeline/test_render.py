"""Text and JSON views of answers: citations show their pages when the source has them."""

from __future__ import annotations

import dataclasses

import pytest

from veracity.model.contracts import AnswerStatus, Citation, Claim
from veracity.pipeline.engine import Answer
from veracity.pipeline.render import answer_dict, answer_text, citation_dict, page_label
from veracity.pipeline.trace import Trace


def _citation(cid: int, pages: tuple[int | None, int | None]) -> Citation:
    return Citation(cid, "d" * 64, "manual", "1", f"{cid}" * 16, ("Guide", "Upgrade"), 0, 9, "x" * 64, *pages)


def _answer(*citations: Citation) -> Answer:
    return Answer(
        question="how?",
        status=AnswerStatus.ANSWER,
        claims=(Claim("Run the tool.", tuple(c.citation_id for c in citations)),),
        citations=citations,
        missing_fact_ids=(),
        uncovered_subquestions=(),
        reasons=(),
        trace=Trace("q" * 64, "acme", ("public",), "3.2", "2026-01-01T00:00:00+00:00"),
    )


@pytest.mark.parametrize(
    ("pages", "label"), [((3, 3), "p. 3"), ((3, 4), "pp. 3–4"), ((3, None), "p. 3"), ((None, None), "")]
)
def test_page_label(pages: tuple[int | None, int | None], label: str) -> None:
    assert page_label(*pages) == label


def test_text_shows_pages_only_when_known() -> None:
    text = answer_text(_answer(_citation(1, (2, 2)), _citation(2, (3, 4)), _citation(3, (None, None))))
    lines = [line for line in text.splitlines() if line.startswith("  [")]
    assert lines[0] == "  [1] manual rev 1 · Guide > Upgrade · p. 2 · chunk 111111111111"
    assert " · pp. 3–4 · " in lines[1]
    assert lines[2] == "  [3] manual rev 1 · Guide > Upgrade · chunk 333333333333"


def test_json_has_the_page_fields() -> None:
    assert citation_dict(_citation(1, (3, 4)))["page_start"] == 3
    data = answer_dict(_answer(_citation(1, (2, 2)), _citation(2, (None, None))))
    assert [(c["page_start"], c["page_end"]) for c in data["citations"]] == [(2, 2), (None, None)]


@pytest.mark.parametrize("claim", ["- To clear the cache, run it.", "2. To clear the cache, run it."])
def test_a_claim_copied_from_a_list_item_prints_one_bullet(claim: str) -> None:
    answer = dataclasses.replace(_answer(_citation(1, (None, None))), claims=(Claim(claim, (1,)),))
    assert "- To clear the cache, run it. [1]" in answer_text(answer).splitlines()
    assert answer_dict(answer)["claims"][0]["text"] == claim  # the claim itself stays verbatim
