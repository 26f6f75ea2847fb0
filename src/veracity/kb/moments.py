"""The moment a question is asked at, as the command line, the API and the service take it.

``None`` or ``"now"`` is now; a date (any ISO spelling: ``2026-12-06``, ``20261206``) is the end
of that day, UTC; a datetime is itself (UTC when it names no zone). Anything else, or a moment
UTC cannot hold, raises ``ValidationError`` naming ``as_of``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time

from ..model.errors import ValidationError

__all__ = ["Moment", "parse_as_of"]

Moment = datetime | date | str | None


def parse_as_of(value: Moment, *, now: datetime | None = None) -> datetime:
    """The moment a question is asked at: ``None``/``"now"`` → now; a date → the end of that day (UTC).

    Every date form ``date.fromisoformat`` reads (``2026-12-06``, ``20261206``) is a date; a
    datetime without a zone is taken as UTC; anything else, or a moment outside what UTC can
    hold (before year 1 or after year 9999), raises ``ValidationError`` naming ``as_of``.
    """
    current = now or datetime.now(UTC)
    if value is None or (isinstance(value, str) and value.strip().lower() == "now"):
        return current
    day = _day_of(value)
    if day is not None:
        return datetime.combine(day, time.max, tzinfo=UTC)
    moment = _moment_of(value)
    try:
        moment.astimezone(UTC)  # every reader compares moments in UTC, so one it cannot hold is refused here
    except OverflowError:
        raise ValidationError(
            f"{value!r} is out of the supported range; give a moment between the years 1 and 9999 (UTC)",
            field="as_of",
        ) from None
    return moment


def _day_of(value: Moment) -> date | None:
    """The day ``value`` names when it is a date alone (in any ISO spelling), else ``None``."""
    if isinstance(value, datetime):
        return None
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            return None
    return None


def _moment_of(value: Moment) -> datetime:
    """``value`` read as a datetime (UTC when it names no zone)."""
    moment = value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            moment = None
    if not isinstance(moment, datetime):
        raise ValidationError(
            f"cannot read {value!r} as a moment; give 'now', a date (2026-08-27) or an ISO datetime",
            field="as_of",
        )
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
