"""The ``/v1`` API and the health probes: each route parses its input and makes one gateway call.

Identity comes from ``Authorization: Bearer KEY`` alone (:func:`caller`);
request bodies forbid fields they do not define, so a body can never name a
tenant or a role. Library errors become statuses in :mod:`veracity.service.errors`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Final

from fastapi import APIRouter, Depends, File, Form, HTTPException, Query, Request, UploadFile
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..model.errors import ValidationError, VeracityError
from .core.gateway import Caller, Gateway
from .errors import error_body

__all__ = ["JSON", "Gate", "RequestBody", "Who", "make_router", "router", "sse"]


def make_router() -> APIRouter:
    """A router reading a body without ``Content-Type`` as JSON (see :func:`json_body`).

    FastAPI 0.132 made that strict by default and added the switch; earlier
    versions, which the ``serve`` extra allows, read such a body as JSON already.
    """
    try:
        return APIRouter(strict_content_type=False)
    except TypeError:
        return APIRouter()


router = make_router()
_bearer = HTTPBearer(auto_error=False, description="An API key from 'veracity keys create'.")


def gateway(request: Request) -> Gateway:
    """The application's gateway."""
    return request.app.state.gateway


def caller(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> Caller:
    """The caller of the presented key (401 without one, 429 over its rate)."""
    return gateway(request).admit(credentials.credentials if credentials else None)


Gate = Annotated[Gateway, Depends(gateway)]
Who = Annotated[Caller, Depends(caller)]
JSON_TYPE = "application/json"


def json_body(request: Request) -> None:
    """415 naming the header to send when a JSON route's body is declared as something else.

    ``curl -d`` declares ``application/x-www-form-urlencoded``; without this the
    client would only read "Input should be a valid dictionary". A body with no
    ``Content-Type`` at all is read as JSON (the router is not strict about it):
    identity travels in the ``Authorization`` header, which a cross-site form
    cannot set, so that leniency opens nothing.
    """
    declared = request.headers.get("content-type", "")
    kind = declared.split(";", 1)[0].strip().lower()
    if declared and kind != JSON_TYPE and not (kind.startswith("application/") and kind.endswith("+json")):
        raise HTTPException(
            415, f"send the body as JSON with the header 'Content-Type: {JSON_TYPE}' (this request "
            f"declared {declared!r}; with curl: -H 'Content-Type: {JSON_TYPE}' -d '{{...}}')",
        )  # fmt: skip


JSON = [Depends(json_body)]


def _unicode_text(value: Any) -> Any:
    """``value`` unchanged when every string in it is valid Unicode; ``ValueError`` otherwise."""
    for text in value if isinstance(value, list) else [value]:
        if isinstance(text, str):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                where = f"U+{ord(exc.object[exc.start]):04X}"
                raise ValueError(
                    f"the text is not valid Unicode (a lone surrogate, {where}); send UTF-8 text"
                ) from None
    return value


class RequestBody(BaseModel):
    """A JSON request body: fields it does not define are refused, and so is text that is not Unicode;
    values are not converted (``"yes"`` is not ``true``), and a version must be a string.

    JSON may escape a lone surrogate (``"\\ud800"``), which Python reads into a string that no
    later step can encode; refusing it here keeps it out of every route.
    """

    model_config = ConfigDict(extra="forbid", strict=True)  # "yes" is no boolean, "3" no number

    @field_validator("*")
    @classmethod
    def _valid_unicode(cls, value: Any) -> Any:
        return _unicode_text(value)

    @field_validator("version", mode="before", check_fields=False)
    @classmethod
    def _version_as_text(cls, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            raise ValueError(
                f'write the version as a JSON string ("{value}"): a number loses its digits (3.10 is 3.1)'
            )
        return value


class AskBody(RequestBody):
    """A question. Who asks comes from the key, never from here."""

    question: str = Field(description="The question, in any language.")
    version: str | None = Field(None, description="Product version it is about; 'all' for none.")
    as_of: str | None = Field(None, description="'now', a date (end of that day, UTC) or an ISO datetime.")
    explain: bool = Field(False, description="Add the trace (and, for operator keys, the candidates).")


class SearchBody(RequestBody):
    """A search for tools that bring their own generator."""

    query: str
    version: str | None = None
    as_of: str | None = None
    limit: int | None = Field(None, ge=1, le=100)


@router.get("/healthz", tags=["health"])
def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get("/readyz", tags=["health"])
def readyz(gate: Gate) -> JSONResponse:
    """The knowledge base is open and its published index version is verified (503 otherwise).

    Only whether each check passed: the details are in the operator's ``/v1/status``.
    """
    report = gate.readiness(detail=False)
    return JSONResponse(report, status_code=200 if report["ready"] else 503)


@router.post("/v1/ask", tags=["answers"], dependencies=JSON)
def ask(body: AskBody, who: Who, gate: Gate) -> dict[str, Any]:
    """Answer, partial answer or abstain: the JSON of ``veracity ask --json`` plus cache and degradation."""
    served = gate.ask(who, body.question, version=body.version, as_of=body.as_of, explain=body.explain)
    return served.as_dict()


_LOG = logging.getLogger(__name__)

INTERNAL_ERROR: Final = {
    "error": "InternalError",
    "detail": "the server failed to finish this answer; the failure is in its log",
    "status": 500,
}
"""The ``error`` event of a stream that failed unexpectedly (what failed stays in the server's log)."""


def sse(events: Iterable[tuple[str, dict[str, Any]]]) -> Iterator[str]:
    """Server-sent events of ``(name, data)`` pairs; an error after the start becomes an ``error``
    event (the status line has gone already), so a client never waits on a stream that just ends."""
    try:
        for name, data in events:
            yield f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
    except VeracityError as exc:  # the stream has started: the error travels as an event
        yield f"event: error\ndata: {json.dumps(error_body(exc), ensure_ascii=False)}\n\n"
    except Exception:
        _LOG.exception("a streamed answer failed")
        yield f"event: error\ndata: {json.dumps(INTERNAL_ERROR)}\n\n"


@router.get("/v1/ask/stream", tags=["answers"])
def ask_stream(
    who: Who,
    gate: Gate,
    question: str,
    version: str | None = None,
    as_of: str | None = None,
    explain: bool = False,
) -> StreamingResponse:
    """Server-sent events: ``accepted``, ``status``, one ``claim`` and ``citation`` each, ``done``."""
    events = gate.ask_events(who, question, version=version, as_of=as_of, explain=explain)
    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(sse(events), media_type="text/event-stream", headers=headers)


@router.post("/v1/search", tags=["answers"], dependencies=JSON)
def search(body: SearchBody, who: Who, gate: Gate) -> dict[str, Any]:
    """The ranked chunks the key may use for ``query``, after every gate, with their text."""
    return gate.search(who, body.query, version=body.version, as_of=body.as_of, limit=body.limit)


@router.get("/v1/documents", tags=["documents"])
def documents(who: Who, gate: Gate, as_of: str | None = None) -> dict[str, Any]:
    """The documents the key may see (an operator key: every document of its tenant), and the
    version and moment an ask of its tenant takes when it names none (``defaults``)."""
    return {"documents": gate.documents(who, as_of=as_of), "defaults": gate.defaults(who)}


# A source id is the file's path in the ingested folder (``pdf/tidewater-sla``), so every
# document route takes ``{document_id:path}``: raw slashes and ``%2F`` (decoded before routing)
# both reach it. The converter is greedy, so a route with a suffix (``/chunks/…``, ``/withdraw``)
# is declared before the bare route of the same method, which would otherwise swallow it.


@router.get(
    "/v1/documents/{document_id:path}/pages/{page:int}.png", tags=["documents"], response_class=Response
)
def page_image(
    document_id: str, page: int, who: Who, gate: Gate, width: Annotated[int, Query(ge=100, le=1600)] = 1000,
    as_of: str | None = None,
) -> Response:  # fmt: skip
    """A page of a visible PDF (or a cited image) as PNG, for the citation card's region view; 404
    when the key may not see the document, the page is not one its chunks cover, or the file is gone."""
    image = gate.page_image(who, document_id, page, width=width, as_of=as_of)
    return Response(image, media_type="image/png", headers={"Cache-Control": "private, no-store"})


@router.get("/v1/documents/{document_id:path}/chunks/{chunk_id}", tags=["documents"])
def chunk_context(
    document_id: str,
    chunk_id: str,
    who: Who,
    gate: Gate,
    quote: str | None = None,
    around: Annotated[int, Query(ge=0, le=5)] = 1,
    as_of: str | None = None,
) -> dict[str, Any]:
    """A cited chunk in its document (title, headings, page, neighbours) with ``quote`` highlighted."""
    return gate.chunk_context(who, document_id, chunk_id, quote=quote, around=around, as_of=as_of)


@router.get("/v1/documents/{document_id:path}", tags=["documents"])
def document(document_id: str, who: Who, gate: Gate, as_of: str | None = None) -> dict[str, Any]:
    """A document with its chunks; 404 when it does not exist or the key may not see it."""
    return gate.document(who, document_id, as_of=as_of)


@router.post("/v1/documents", tags=["operator"])
def upload(
    who: Who,
    gate: Gate,
    files: Annotated[list[UploadFile], File(description="One or more documents.")],
    metadata: Annotated[
        str | None, Form(description="JSON object of governance fields for every file.")
    ] = None,
) -> JSONResponse:
    """Operator: ingest uploaded files into the key's tenant (the CLI's ingest path and rejections)."""
    try:
        fields = json.loads(metadata) if metadata else None
    except json.JSONDecodeError as exc:
        raise ValidationError(f"metadata is not JSON: {exc}", field="metadata") from None
    report = gate.upload(who, [(f.filename or "", f.file.read()) for f in files], fields)
    accepted = report["added"] or report["revised"] or report["unchanged"] or report["restored"]
    return JSONResponse(report, status_code=422 if report["rejected"] and not accepted else 200)


@router.post("/v1/documents/{document_id:path}/withdraw", tags=["operator"])
def withdraw(document_id: str, who: Who, gate: Gate) -> dict[str, Any]:
    """Operator: withdraw a document (wrong or unsafe); no answer cites it again."""
    return gate.change(who, document_id, "withdraw")


@router.post("/v1/documents/{document_id:path}/retire", tags=["operator"])
def retire(document_id: str, who: Who, gate: Gate) -> dict[str, Any]:
    """Operator: retire a document (replaced or obsolete)."""
    return gate.change(who, document_id, "retire")


@router.delete("/v1/documents/{document_id:path}", tags=["operator"])
def delete(document_id: str, who: Who, gate: Gate) -> dict[str, Any]:
    """Operator: delete a document with its chunks, postings and vectors."""
    return gate.change(who, document_id, "delete")


@router.get("/v1/status", tags=["operator"])
def status(who: Who, gate: Gate) -> dict[str, Any]:
    """Operator: the tenant's documents by status, the index, the answer cache, the components."""
    return gate.status(who)


@router.post("/v1/index/reindex", tags=["operator"])
def reindex(who: Who, gate: Gate) -> dict[str, Any]:
    """Operator: build, verify and publish a new index version."""
    return gate.reindex(who)
