"""Storing the template fields a try rendered, reported by its task process."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from statewright.db.repositories import rendered_fields as rendered_repo

EXTRA_KEY = "rendered_fields"


def record_rendered_fields(conn: Connection, results: Sequence[Any], now: datetime) -> None:
    """One row per try that rendered its fields (a try that failed to render stores none)."""
    rendered_repo.record(conn, [
        rendered_repo.RenderedTry(r.ti_id, r.try_number, r.dag_id, r.run_id, r.task_id,
                                  dict(r.extra[EXTRA_KEY]))
        for r in results if isinstance((r.extra or {}).get(EXTRA_KEY), dict)], now)
