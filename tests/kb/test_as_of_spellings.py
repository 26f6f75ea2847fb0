"""``parse_as_of``: every spelling of a date means the end of that day, and a moment UTC cannot
hold is a clear ``ValidationError`` rather than an ``OverflowError``."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from veracity.kb.local import parse_as_of
from veracity.model.errors import ValidationError

END_OF_DAY = datetime(2026, 12, 6, 23, 59, 59, 999999, tzinfo=UTC)


@pytest.mark.parametrize("spelling", ["2026-12-06", "20261206", " 20261206 ", "2026-W49-7", "2026W497"])
def test_every_date_spelling_means_the_end_of_that_day(spelling: str) -> None:
    assert parse_as_of(spelling) == END_OF_DAY == parse_as_of(date(2026, 12, 6))


@pytest.mark.parametrize(
    ("spelling", "moment"),
    [
        ("2026-12-06T00:00", datetime(2026, 12, 6, tzinfo=UTC)),
        ("20261206T000000Z", datetime(2026, 12, 6, tzinfo=UTC)),
        ("2026-12-06T10:30:00+05:00", datetime(2026, 12, 6, 5, 30, tzinfo=UTC)),
    ],
)
def test_a_datetime_means_itself(spelling: str, moment: datetime) -> None:
    assert parse_as_of(spelling) == moment


def test_the_last_day_ends_at_the_last_moment_utc_holds() -> None:
    assert parse_as_of("9999-12-31") == datetime.max.replace(tzinfo=UTC)
    assert parse_as_of("0001-01-01T00:00:00Z") == datetime.min.replace(tzinfo=UTC)


@pytest.mark.parametrize(
    "moment",
    [
        "0001-01-01T00:00:00+05:00",
        "9999-12-31T23:59:59-05:00",
        datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5))),
    ],
)
def test_a_moment_outside_utc_is_a_validation_error(moment: str | datetime) -> None:
    with pytest.raises(ValidationError, match="out of the supported range") as raised:
        parse_as_of(moment)
    assert raised.value.field == "as_of"
