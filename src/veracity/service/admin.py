"""Operator routes for the tenant's keys and quarantined text (see :mod:`veracity.service.core.admin`).

``GET /v1/keys``, ``POST /v1/keys`` (the secret is in that answer once), ``POST
/v1/keys/{key_id}/revoke``, ``GET /v1/quarantine``: operator keys only, their own tenant only.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from pydantic import Field

from .api import JSON, RequestBody, Who, make_router
from .core.admin import Admin

__all__ = ["router"]

router = make_router()


def admin(request: Request) -> Admin:
    """The application's operator views (over its gateway)."""
    return Admin(request.app.state.gateway)


Operator = Annotated[Admin, Depends(admin)]


class KeyBody(RequestBody):
    """A new key of the operator's tenant. The tenant comes from the operator's key."""

    name: str | None = Field(None, description="A name to tell it by (default: key-<id>).")
    roles: list[str] = Field(description="The roles it asks with, e.g. ['public'] (defined by the tenant).")
    operator: bool = Field(False, description="Whether it may use the operator routes.")


@router.get("/v1/keys", tags=["operator"])
def keys(who: Who, views: Operator) -> dict[str, Any]:
    """The tenant's keys, revoked ones included; never a secret."""
    return {"keys": views.keys(who)}


@router.post("/v1/keys", tags=["operator"], dependencies=JSON)
def create(body: KeyBody, who: Who, views: Operator) -> dict[str, Any]:
    """A new key; ``secret`` is shown in this answer only (only a salted digest is stored)."""
    return views.create(who, body.name, body.roles, body.operator)


@router.post("/v1/keys/{key_id}/revoke", tags=["operator"])
def revoke(key_id: str, who: Who, views: Operator) -> dict[str, Any]:
    """Revoke a key of the tenant; it is refused from the next request on."""
    return views.revoke(who, key_id)


@router.get("/v1/quarantine", tags=["operator"])
def quarantine(who: Who, views: Operator) -> dict[str, Any]:
    """The tenant's non-official chunks an answer holds back, with the detector's signals."""
    return {"chunks": views.quarantine(who)}
