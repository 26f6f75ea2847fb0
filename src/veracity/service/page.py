"""The page: plain HTML shells served by the application, a small script and a style sheet.

``/`` asks (the answer streams in from ``/v1/ask/stream``; citations open
their chunk in context); ``/operator`` lists the tenant's documents and
withdraws one. The HTML is rendered here with the knowledge base's name;
everything a key may see is fetched by the script with that key, which the
browser keeps in session storage only. No build step: the files in
``static/`` are served as they are.
"""

from __future__ import annotations

import html
import json
from functools import lru_cache
from pathlib import Path
from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse

from ..kb.backends import short_name

__all__ = ["STATIC", "router"]

STATIC: Final = Path(__file__).parent / "static"

router = APIRouter(include_in_schema=False)


_PAGES: Final = {"page.html": ("/", "veracity"), "operator.html": ("/operator", "veracity · operator")}
"""Each page: the link of its own in the navigation, and its title (the knowledge base's name follows)."""


@lru_cache(maxsize=4)
def _template(name: str) -> str:
    """The page ``name`` with its top (``static/top.html``: head, navigation, key panel) and the
    labels (``static/labels.json``, as data in the head) filled in."""
    link, title = _PAGES[name]
    labels = json.loads((STATIC / "labels.json").read_text(encoding="utf-8"))
    # inside <script>, "</" would end the element: JSON may write it "<\/"
    labels_text = json.dumps(labels, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    top = (
        (STATIC / "top.html")
        .read_text(encoding="utf-8")
        .replace("{{title}}", title)
        .replace(f'<a href="{link}" ', f'<a href="{link}" aria-current="page" ')
        .replace("{{labels}}", labels_text)
    )
    return (STATIC / name).read_text(encoding="utf-8").replace("{{top}}", top)


def render(name: str, kb_name: str) -> str:
    """The HTML file ``name`` with the knowledge base's name filled in (escaped)."""
    return _template(name).replace("{{kb_name}}", html.escape(kb_name))


def _kb_name(request: Request) -> str:
    path = request.app.state.gateway.kb.path
    return short_name(path) if path is not None else "knowledge base"


@router.get("/", response_class=HTMLResponse)
def ask_page(request: Request) -> HTMLResponse:
    """The question page."""
    return HTMLResponse(render("page.html", _kb_name(request)))


@router.get("/operator", response_class=HTMLResponse)
def operator_page(request: Request) -> HTMLResponse:
    """The operator's documents page."""
    return HTMLResponse(render("operator.html", _kb_name(request)))


@router.get("/favicon.ico")
def favicon() -> FileResponse:
    """The icon, where browsers look for it even when the page links ``/static/favicon.svg``."""
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")
