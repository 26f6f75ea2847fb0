"""``serve --access-log``: a line per request on standard error; without it, warnings and errors only."""

from __future__ import annotations

import logging

from veracity.service.app import ServiceOptions
from veracity.service.server import _config


def test_requests_are_logged_only_when_asked(monkeypatch) -> None:
    access = logging.getLogger("uvicorn.access")
    monkeypatch.setattr(access, "level", access.level)  # restored after the test
    quiet = _config(object(), ServiceOptions(kb="kb"))
    assert quiet.access_log is False
    loud = _config(object(), ServiceOptions(kb="kb", access_log=True))
    assert loud.access_log is True and access.getEffectiveLevel() == logging.INFO
    again = ServiceOptions.from_json(ServiceOptions(kb="kb", access_log=True).to_json())
    assert again.access_log is True  # what a worker reads from its environment
