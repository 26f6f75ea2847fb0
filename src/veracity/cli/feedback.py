"""``veracity feedback``: the 👍/👎 people gave the service's answers, listed or exported as cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..text.display import printable
from .common import KB_OPTION, library_errors, print_json, print_table

__all__ = ["feedback_group"]

RATING = click.option(
    "--rating", type=click.Choice(["down", "up", "all"]), default="down", show_default=True,
    help="Which feedback: thumbs down (what to fix), thumbs up, or all.",
)  # fmt: skip
TENANT = click.option("--tenant", help="Only this tenant's feedback [default: every tenant].")


@click.group("feedback")
def feedback_group() -> None:
    """Feedback on the service's answers (operator view): list it, or export it as evaluation cases."""


@feedback_group.command(
    "list", epilog="Operator view: it names questions, keys and citations of every tenant."
)
@KB_OPTION
@RATING
@TENANT
@click.option("--json", "as_json", is_flag=True, help="Print JSON (one object per rated turn).")
def list_command(kb_dir: Any, rating: str, tenant: str | None, as_json: bool) -> None:
    """The rated turns, newest first: the question as asked, the status, the cited sources, the comment."""
    from ..service.core.feedback import items, read_feedback

    with library_errors():
        found = items(read_feedback(kb_dir, rating=None if rating == "all" else rating, tenant=tenant))
    if as_json:
        print_json(found)
        return
    if not found:
        click.echo("no feedback" + ("" if rating == "all" else f" rated {rating}"))
        return
    print_table(
        [
            {
                "rated": f"{'👍' if item['rating'] == 'up' else '👎'} {item['rated_at']}",
                "tenant": item["tenant"],
                "question": printable(item["question"]),
                "status": item["status"],
                "cited": ", ".join(printable(str(c["source_id"])) for c in item["cited"]),
                "comment": printable(item["comment"]),
            }
            for item in found
        ],
        title=f"{len(found)} rated turns",
    )


@feedback_group.command("export")
@KB_OPTION
@RATING
@TENANT
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="The JSONL file to write."
)
def export_command(kb_dir: Any, rating: str, tenant: str | None, out: Path) -> None:
    """Write the rated turns as evaluation cases (JSONL) to finish by hand: each has the question,
    who asked it and when; fill in expected_status and relevant_document_ids, then run
    `veracity eval --cases FILE`."""
    from ..service.core.feedback import feedback_case, read_feedback

    with library_errors():
        rows = read_feedback(kb_dir, rating=None if rating == "all" else rating, tenant=tenant)
        lines = [json.dumps(feedback_case(f, t), ensure_ascii=False, sort_keys=True) for f, t in rows]
        out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    click.echo(f"{out}: {len(lines)} cases (expected_status left empty: fill it in before 'veracity eval')")
