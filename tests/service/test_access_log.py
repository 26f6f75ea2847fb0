"""``serve --access-log``: a line per request on standard error; without it, warnings and errors only."""

from __future__ import annotations

from veracity.service.app import ServiceOptions
from veracity.service.server import LOG_LEVEL, logging_options


def test_requests_are_logged_only_when_asked() -> None:
    assert logging_options(ServiceOptions(kb="kb")) == {"log_level": LOG_LEVEL}
    loud = logging_options(ServiceOptions(kb="kb", access_log=True))
    assert loud["access_log"] is True
    loggers = loud["log_config"]["loggers"]
    assert loggers["uvicorn.access"]["level"] == "INFO" and loggers["uvicorn"]["level"] == LOG_LEVEL.upper()
    assert loud["log_config"]["handlers"]["access"]["stream"] == "ext://sys.stderr"
    again = ServiceOptions.from_json(ServiceOptions(kb="kb", access_log=True).to_json())
    assert again.access_log is True  # what a worker reads from its environment
