"""``statewright.sdk.timezone``: Airflow's ``airflow.utils.timezone`` helpers, also reached as
``airflow.providers.common.compat.sdk.timezone`` through the compatibility layer."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pendulum
import pytest

from statewright.compat.airflow.resolver import has, resolve
from statewright.sdk import timezone

BERLIN = ZoneInfo("Europe/Berlin")


def test_naive_values_are_taken_to_be_utc() -> None:
    assert timezone.datetime(2022, 1, 1) == dt.datetime(2022, 1, 1, tzinfo=dt.UTC)
    assert timezone.datetime(2022, 1, 1, tzinfo=BERLIN).utcoffset() == dt.timedelta(hours=1)
    assert timezone.convert_to_utc(dt.datetime(2022, 1, 1, 3)) == pendulum.datetime(2022, 1, 1, 3)
    assert timezone.convert_to_utc(None) is None
    parsed = timezone.parse("2022-06-01T10:00")
    assert isinstance(parsed, pendulum.DateTime) and parsed.utcoffset() == dt.timedelta(0)
    assert timezone.parse("2022-06-01T10:00", timezone="Europe/Berlin").hour == 10
    assert timezone.parse("2022-06-01T10:00+02:00").utcoffset() == dt.timedelta(hours=2)


def test_aware_values_keep_their_moment() -> None:
    berlin = dt.datetime(2022, 6, 1, 12, tzinfo=BERLIN)
    assert timezone.convert_to_utc(berlin) == dt.datetime(2022, 6, 1, 10, tzinfo=dt.UTC)
    assert timezone.coerce_datetime(berlin).tzinfo is not None  # type: ignore[union-attr]
    assert timezone.coerce_datetime(berlin) == berlin
    assert timezone.coerce_datetime(None) is None
    assert timezone.utcnow().utcoffset() == dt.timedelta(0)
    assert timezone.is_localized(berlin) and timezone.is_naive(dt.datetime(2022, 1, 1))


def test_make_aware_and_make_naive_round_trip() -> None:
    naive = dt.datetime(2022, 6, 1, 12)
    aware = timezone.make_aware(naive, BERLIN)
    assert aware is not None and aware.utcoffset() == dt.timedelta(hours=2)
    assert timezone.make_naive(aware, BERLIN) == naive
    assert timezone.make_naive(aware) == dt.datetime(2022, 6, 1, 10)
    assert timezone.make_aware(None) is None
    with pytest.raises(ValueError, match="naive"):
        timezone.make_aware(aware)
    with pytest.raises(ValueError, match="naive"):
        timezone.make_naive(naive)


def test_durations_and_timestamps() -> None:
    assert timezone.td_format(dt.timedelta(seconds=3752)) == "1h:2M:32s"
    assert timezone.td_format(40 * 86400) == "1m:10d"
    assert timezone.td_format(0.5) == "<1s" and timezone.td_format(None) is None
    assert timezone.from_timestamp(0) == dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    assert timezone.from_timestamp(0, "Asia/Tokyo").hour == 9
    assert timezone.parse_timezone("Europe/Berlin").name == "Europe/Berlin"


def test_airflow_module_paths_reach_the_same_helpers() -> None:
    assert resolve("airflow.providers.common.compat.sdk", "timezone") is timezone
    assert has("airflow.providers.common.compat.sdk", "timezone")
    assert resolve("airflow.utils.timezone", "utcnow") is timezone.utcnow
    assert resolve("airflow.utils.timezone", "make_aware") is timezone.make_aware
    assert resolve("airflow.sdk.timezone", "coerce_datetime") is timezone.coerce_datetime
