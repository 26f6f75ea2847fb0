"""``veracity serve`` and ``veracity keys``: the HTTP service and its API keys.

Thin: parse, make one library call (:mod:`veracity.kb.keys`,
:func:`veracity.service.server.serve`), print. ``serve`` needs the ``serve``
extra and says how to install it when it is missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from .common import (
    KB_OPTION,
    READ_URL_OPTION,
    embedder_option,
    kb_option,
    library_errors,
    use_read_url,
)

__all__ = ["keys", "serve_command"]

INSTALL_HINT = "the service needs the 'serve' extra: pip install 'veracity[serve]'"
DEMO_KEYS = (
    ("demo-public", ("public",), False),
    ("demo-maintainer", ("maintainer",), False),
    ("demo-operator", ("maintainer",), True),
)


def _require_serve_extra() -> None:
    try:
        import fastapi  # noqa: F401
        import python_multipart  # noqa: F401  (0.0.13 and later; "multipart" is deprecated)
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise click.ClickException(f"{INSTALL_HINT} ({exc})") from None


def _roles(value: str) -> list[str]:
    roles = [part.strip() for part in value.split(",") if part.strip()]
    if not roles:
        raise click.BadParameter("name at least one role, e.g. --roles public", param_hint="--roles")
    return roles


def _write_demo(kb_dir: Path, embedder: str | None) -> None:
    """The Starship demo in ``kb_dir`` with three keys, printed once."""
    from ..index.embedders import make_embedder
    from ..kb.directory import init_demo_kb
    from ..kb.keys import create_key
    from ..kb.local import LocalKnowledgeBase

    engine = init_demo_kb(kb_dir, make_embedder(embedder) if embedder else None)
    kb = LocalKnowledgeBase(engine, kb_dir)
    click.echo(f"wrote the Starship demo into {kb_dir}/")
    click.echo("API keys (shown once; the knowledge base keeps only salted digests):")
    for name, roles, operator in DEMO_KEYS:
        made = create_key(kb, tenant="starship", roles=roles, operator=operator, name=name)
        click.echo(f"  {name:16} {made.secret}")
    kb.close()


@click.command("serve")
@kb_option("Knowledge base: a directory or a postgresql:// URL (or $VERACITY_KB).")
@READ_URL_OPTION
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (0: any free one).",
)
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64), help="Processes.")
@click.option(
    "--threads",
    default=2,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Questions each worker answers at the same time (each thread holds its own index state; "
    "on PostgreSQL a worker holds at most 3 x threads + 4 connections per role).",
)
@click.option("--demo", is_flag=True, help="Write the Starship demo into --kb first (when it holds none).")
@embedder_option()
@click.option(
    "--rate-limit",
    default=600.0,
    show_default=True,
    type=click.FloatRange(0),
    help="Requests a minute per key (0: no limit); every worker of the knowledge base shares it.",
)
@click.option(
    "--burst", default=60, show_default=True, type=click.IntRange(1), help="Requests at once per key."
)
@click.option("--max-body-kb", default=64, show_default=True, type=click.IntRange(1), help="JSON body limit.")
@click.option("--max-upload-mb", default=32, show_default=True, type=click.IntRange(1), help="Upload limit.")
@click.option(
    "--cache-entries", default=2048, show_default=True, type=click.IntRange(0), help="Answer cache."
)
@click.option(
    "--page-images/--no-page-images", default=True, show_default=True,
    help="Serve the cited page of a PDF (or a cited image) as a picture, rendered from the ingested file "
    "for keys that may see the document.",
)  # fmt: skip
@click.option(
    "--access-log/--no-access-log", default=False, show_default=True,
    help="Write a line per request (client, method, path, status) to standard error.",
)  # fmt: skip
def serve_command(
    kb_dir: Path,
    read_url: str | None,
    host: str,
    port: int,
    workers: int,
    threads: int,
    demo: bool,
    embedder: str | None,
    rate_limit: float,
    burst: int,
    max_body_kb: int,
    max_upload_mb: int,
    cache_entries: int,
    page_images: bool,
    access_log: bool,
) -> None:
    """Serve a knowledge base over HTTP: the API (/v1, OpenAPI at /openapi.json, docs at /docs)
    and the page (/).

    Every request needs 'Authorization: Bearer KEY' (create keys with
    'veracity keys create'); the key alone decides the tenant and roles.
    """
    from ..service.blas import limit_blas_threads  # before anything loads numpy

    use_read_url(read_url, kb_dir)  # before any store opens, and inherited by the worker processes
    limit_blas_threads()
    _require_serve_extra()
    from ..kb.directory import holds_knowledge_base_at
    from ..service.app import ServiceOptions
    from ..service.server import serve

    with library_errors():
        if demo and not holds_knowledge_base_at(kb_dir):
            _write_demo(kb_dir, embedder)
        options = ServiceOptions(
            kb=str(kb_dir), embedder=embedder, rate_per_minute=rate_limit, burst=burst,
            max_body=max_body_kb * 1024, max_upload=max_upload_mb * 1024 * 1024, cache_entries=cache_entries,
            answer_sessions=threads, page_images=page_images, access_log=access_log,
        )  # fmt: skip

        def ready() -> None:  # only once the knowledge base is open and checked
            click.echo(f"serving {kb_dir} at http://{host}:{port}/ (API docs: /docs; Ctrl-C stops)", err=True)

        serve(options, host=host, port=port, workers=workers, ready=ready)


@click.group("keys")
def keys() -> None:
    """API keys of a knowledge base: create (printed once), list, revoke."""


def _open(kb_dir: Path) -> Any:
    from ..kb.local import open_local

    return open_local(kb_dir, create=False)


@keys.command("create")
@KB_OPTION
@click.option("--tenant", required=True, help="The tenant the key asks as.")
@click.option("--roles", required=True, help="Comma-separated roles the key asks with.")
@click.option("--operator", is_flag=True, help="Allow operator actions (upload, withdraw, delete, status).")
@click.option("--name", help="A name to list and revoke it by [default: key-<id>].")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def create_command(
    kb_dir: Path, tenant: str, roles: str, operator: bool, name: str | None, as_json: bool
) -> None:
    """Create a key and print it once; the knowledge base keeps only a salted digest."""
    from ..kb.keys import create_key

    with library_errors():
        kb = _open(kb_dir)
        made = create_key(kb, tenant=tenant, roles=_roles(roles), operator=operator, name=name)
        kb.close()
    if as_json:
        click.echo(json.dumps({**made.key.as_dict(), "key": made.secret}, ensure_ascii=False, indent=2))
        return
    click.echo(made.secret)
    scope = f"tenant {made.key.tenant}, roles {', '.join(made.key.roles)}"
    kind = "operator key" if operator else "key"
    click.echo(f"{kind} {made.key.name} ({made.key.key_id}): {scope}; shown once, store it now", err=True)


@keys.command("list")
@KB_OPTION
@click.option("--tenant", help="Only this tenant's keys.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_command(kb_dir: Path, tenant: str | None, as_json: bool) -> None:
    """List keys (never their secrets, which are not stored)."""
    from ..kb.keys import list_keys

    with library_errors():
        kb = _open(kb_dir)
        found = list_keys(kb, tenant)
        kb.close()
    if as_json:
        click.echo(json.dumps([k.as_dict() for k in found], ensure_ascii=False, indent=2))
        return
    for key in found:
        state = f"revoked {key.revoked_at}" if key.revoked_at else "active"
        kind = " operator" if key.operator else ""
        click.echo(f"{key.key_id}  {key.name}  {key.tenant}  {','.join(key.roles)}{kind}  {state}")


@keys.command("revoke")
@click.argument("key")
@KB_OPTION
def revoke_command(key: str, kb_dir: Path) -> None:
    """Revoke KEY (its id or name); requests with it get 401 from then on."""
    from ..kb.keys import revoke_key

    with library_errors():
        kb = _open(kb_dir)
        revoked = revoke_key(kb, key)
        kb.close()
    click.echo(f"{revoked.key_id} ({revoked.name}): revoked {revoked.revoked_at}")
