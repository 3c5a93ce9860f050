"""UTC datetimes read back from SQLite as they were written, zone-aware, through the fast
result processor (one call per value)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, create_engine, func, select

from statewright.db.tables import UTCDateTime


@pytest.mark.parametrize("written", [
    datetime(2026, 11, 24, 23, 56, 16, 798445, tzinfo=UTC),
    datetime(2026, 1, 1, tzinfo=UTC),  # no microseconds
    datetime(2026, 3, 29, 2, 30, tzinfo=timezone(timedelta(hours=2))),  # another zone
])
def test_a_datetime_reads_back_equal_and_in_utc(written: datetime) -> None:
    engine = create_engine("sqlite://")
    table = Table("t", MetaData(), Column("id", Integer, primary_key=True),
                  Column("at", UTCDateTime, nullable=True))
    table.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(table.insert(), [{"at": written}, {"at": None}])
        rows = conn.execute(select(table.c.at).order_by(table.c.id)).scalars().all()
        newest = conn.execute(select(func.max(table.c.at))).scalar_one()
    assert rows[0] == written and rows[0].tzinfo is UTC
    assert rows[1] is None
    assert newest == written and newest.tzinfo is UTC
    engine.dispose()


def test_a_naive_datetime_is_refused() -> None:
    engine = create_engine("sqlite://")
    table = Table("t", MetaData(), Column("at", UTCDateTime))
    table.metadata.create_all(engine)
    with pytest.raises(Exception, match="naive datetime"), engine.begin() as conn:
        conn.execute(table.insert(), [{"at": datetime(2026, 1, 1)}])
    engine.dispose()
