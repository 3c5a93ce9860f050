"""The read-only database access the triggerer hands to triggers that ask for it
(``ExternalTaskTrigger``): the states of another DAG's task instances or runs."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import Engine

from statewright.db.repositories import triggers as trigger_repo


def make_state_reader(engine: Engine) -> Callable[[str, list[str] | None, list[datetime]],
                                                  list[str]]:
    def read(dag_id: str, task_ids: list[str] | None, logical_dates: list[datetime]) -> list[str]:
        with engine.connect() as conn:
            return trigger_repo.external_states(conn, dag_id, task_ids, logical_dates)

    return read
