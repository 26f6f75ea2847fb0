"""``veracity ask``: a question to a knowledge base (``--kb``) or to the built-in demo.

Thin: parse, make one :class:`~veracity.kb.local.LocalKnowledgeBase` call,
print the answer (and with ``--explain`` the candidates table and the
decision). With ``--kb`` every default is the knowledge base's own (its
default tenant, role public, every version, now); without it the demo's
(tenant starship, role public, version 3.2, 2026-08-27T16:00Z, its running
question), and a line on stderr says so.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .common import (
    READ_URL_OPTION,
    composer_of,
    embedder_option,
    kb_option,
    library_errors,
    llm_options,
    print_json,
    print_table,
    use_read_url,
)

__all__ = [
    "ask_command",
    "asker_of",
    "asker_options",
    "check_as_of",
    "check_text",
    "open_for_asking",
    "roles_of",
    "scope_options",
]

F = TypeVar("F", bound=Callable[..., Any])

DEMO_NOTICE = "answering from the built-in Starship demo (use --kb DIR to ask your own knowledge base)"


def open_for_asking(kb_dir: Path | None, embedder: str | None) -> Any:
    """The knowledge base in ``kb_dir``, else the demo with the demo's ask defaults."""
    from ..catalog.defaults import AskDefaults
    from ..index.embedders import DEFAULT_EMBEDDER, make_embedder
    from ..kb.local import LocalKnowledgeBase, open_local
    from ..pipeline.engine import Engine

    if kb_dir is not None:
        return open_local(kb_dir, embedder=make_embedder(embedder) if embedder else None, create=False)
    from ..fixtures import tenant_config  # the demo's YAML: only without --kb

    config = tenant_config()
    defaults = AskDefaults((config.role,), config.target_version, config.as_of, config.running_question)
    engine = Engine.demo(make_embedder(embedder or DEFAULT_EMBEDDER))
    return LocalKnowledgeBase(engine, default_tenant=config.tenant, defaults={config.tenant: defaults})


def roles_of(role: str | None) -> tuple[str, ...] | None:
    """``--role``'s comma-separated roles, or ``None`` when it was not given."""
    if role is None:
        return None
    return tuple(part.strip() for part in role.split(","))


def asker_of(kb: Any, tenant: str | None, role: str | None) -> Any:
    """The principal ``--tenant`` and ``--role`` name, each defaulting to the knowledge base's own."""
    return kb.principal(tenant, roles_of(role) or kb.ask_defaults(tenant or kb.default_tenant).roles)


def scope_options(asker: Any, version: str | None, as_of: str | None) -> dict[str, Any]:
    """The keyword arguments of ``ask`` and ``search`` that say who asks, about which version, when."""
    return {"tenant": asker.tenant, "roles": tuple(sorted(asker.roles)), "version": version, "as_of": as_of}


def check_text(text: str | None, param_hint: str) -> None:
    """Refuse text that is not valid Unicode: bytes a shell passed that are not UTF-8 arrive as
    lone surrogates, which nothing downstream can encode."""
    if text is None:
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise click.BadParameter("the text is not valid UTF-8", param_hint=param_hint) from None


def check_as_of(as_of: str | None) -> None:
    """Refuse an unreadable ``--as-of`` as a usage error, before anything is opened."""
    from ..kb.local import parse_as_of
    from ..model.errors import ValidationError

    if as_of is not None:
        try:
            parse_as_of(as_of)
        except ValidationError as exc:
            raise click.BadParameter(str(exc), param_hint="--as-of") from None


def asker_options(command: F) -> F:
    """Who asks, about which version, when, and with which dense model: the options ``ask`` and
    ``search`` share (passed as ``role``, ``tenant``, ``version``, ``as_of``, ``embedder``,
    ``read_url``)."""
    options = (
        click.option("--role", help="Role of the asker; several comma-separated [default: public]."),
        click.option("--tenant", help="Tenant of the asker [default: the knowledge base's default tenant]."),
        click.option(
            "--version",
            "version",
            help="Product version the question is about; 'all' [default] filters none.",
        ),
        click.option(
            "--as-of",
            help="Moment of the question: 'now' [default], a date (the end of that day, UTC) or an ISO "
            "datetime.",
        ),
        embedder_option(),
        READ_URL_OPTION,
    )
    for option in reversed(options):
        command = option(command)
    return command


@click.command("ask")
@click.argument("question", required=False)
@asker_options
@click.option("--fact", "facts", multiple=True, help="A fact id the answer must cover (repeatable).")
@kb_option(
    "Knowledge base directory or postgresql:// URL [default: $VERACITY_KB, else the built-in demo].",
    required=False,
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option(
    "--explain", is_flag=True, help="Add the candidates (source, heading, ranks, scores, gate), the decision."
)
@click.option(
    "--view",
    type=click.Choice(["operator", "asker"]),
    default="operator",
    show_default=True,
    help="Trace view with --json --explain: this local command is an operator's, so it counts the "
    "documents the asker may not see and adds the candidates table; 'asker' shows only what a "
    "service returns to the asker (the trace, no candidates table).",
)
@llm_options
def ask_command(
    question: str | None,
    role: str | None,
    tenant: str | None,
    version: str | None,
    as_of: str | None,
    facts: tuple[str, ...],
    embedder: str | None,
    kb_dir: Path | None,
    read_url: str | None,
    as_json: bool,
    explain: bool,
    view: str,
    **llm: Any,
) -> None:
    """Answer QUESTION with citations, a partial answer, or an abstain.

    With --kb: as the knowledge base's default tenant, role public, about every
    product version, as of now. Without --kb it asks the built-in demo (its
    running question when QUESTION is left out). With --llm-base-url and
    --llm-model a language model writes the answer and every claim is verified
    against what it cites (the extractive answer when nothing verifies or the
    model is unavailable).
    """
    from ..pipeline.render import answer_dict, answer_text

    use_read_url(read_url, kb_dir)
    if kb_dir is None and not as_json:
        click.echo(DEMO_NOTICE, err=True)
    check_as_of(as_of)
    check_text(question, "QUESTION")
    if any(not fact.strip() for fact in facts):
        raise click.BadParameter("a fact id is empty", param_hint="--fact")
    with library_errors():
        kb = open_for_asking(kb_dir, embedder)
        kb.engine.composer = composer_of(llm, kb.llm_setting())
        asker = asker_of(kb, tenant, role)
        text = question or kb.ask_defaults(asker.tenant).question
        if not text:
            raise click.UsageError("give a QUESTION")
        answer = kb.ask(text, **scope_options(asker, version, as_of), required_fact_ids=facts or None)
        explanation = kb.explain(answer) if explain else None
    if as_json:
        data = answer_dict(answer, explain=explain, audience=view)
        data["knowledge_base"] = str(kb_dir) if kb_dir is not None else "built-in demo"
        # the candidates table counts what the asker may not see: the service gives it to
        # operator keys only, so the asker's view has the trace alone
        if explanation is not None and view == "operator":
            data["explanation"] = explanation.as_dict()
        print_json(data)
        return
    click.echo(answer_text(answer))
    if explanation is not None:
        _print_explanation(explanation)


def _score(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def _print_explanation(explanation: Any, shown: int = 12) -> None:
    trace = explanation.answer.trace
    version = trace.target_version or "all versions"
    click.echo(
        f"\nasked as tenant {trace.tenant}, roles {', '.join(trace.roles)}, {version}, as of {trace.as_of}; "
        f"{trace.eligible_documents} documents eligible ({trace.eligible_chunks} chunks)"
    )
    excluded = ", ".join(f"{reason} {count}" for reason, count in explanation.excluded)
    if excluded:
        click.echo(f"excluded before scoring: {excluded}")
    rows = [
        {
            "#": c.position,
            "source": c.path or c.source_id,
            "heading": " > ".join(c.heading_path) or "(top)",
            "page": c.pages,
            **{name: "" if rank is None else str(rank) for name, rank in c.channel_ranks},
            "fused": _score(c.fused),
            "reranked": _score(c.reranked),
            "gate / evidence": c.outcome,
        }
        for c in explanation.candidates
        if c.position <= shown or c.outcome.startswith("cited")
    ]
    if rows:
        total = len(explanation.candidates)
        if not any(row["page"] for row in rows):
            for row in rows:
                del row["page"]
        title = f"candidates, reranked ({len(rows)} of {total} shown; ranks per recall channel)"
        print_table(rows, title=title, whole=("source",))
    else:
        click.echo("no candidates")
    if explanation.hidden_candidates:
        click.echo(f"{explanation.hidden_candidates} candidates not shown (not visible to this asker)")
    data = explanation.as_dict()["decision"]
    click.echo(f"decision: {data['status']}")
    if data["reasons"]:
        click.echo(f"  reasons: {', '.join(data['reasons'])}")
    if data["missing_fact_ids"]:
        click.echo(f"  missing facts: {', '.join(data['missing_fact_ids'])}")
    for text in data["uncovered_subquestions"]:
        click.echo(f"  not covered by the evidence: {text}")
    for name, value in data["features"].items():
        if isinstance(value, dict) and "score" in value:
            verdict = "answered" if value["answered"] else "not covered"
            score = f"score {value['score']:.3f} (threshold {value['threshold']:.3f})"
            click.echo(f"  {name}: {verdict}, {score}")
            if value["missing_terms"]:
                click.echo(f"    terms no evidence holds: {', '.join(value['missing_terms'])}")
            parts = " · ".join(f"{k} {v:.2f}" for k, v in value["features"].items())
            click.echo(f"    features: {parts}")
        elif isinstance(value, dict):
            click.echo(f"  {name}: " + " · ".join(f"{k} {v}" for k, v in value.items()))
        else:
            click.echo(f"  {name}: {value}")
