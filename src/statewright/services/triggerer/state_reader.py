"""The read-only database access the triggerer hands to triggers that ask for it
(``ExternalTaskTrigger``): the states of another DAG's task instances, task groups or runs."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine

from statewright.db.repositories import triggers as trigger_repo


class DatabaseStateReader:
    """``ExternalTaskTrigger``'s state reader over one database (see ``StateReader``)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def __call__(self, dag_id: str, task_ids: list[str] | None,
                 logical_dates: list[datetime]) -> list[str]:
        with self.engine.connect() as conn:
            return trigger_repo.external_states(conn, dag_id, task_ids, logical_dates)

    def group_states(self, dag_id: str, task_group_id: str,
                     logical_dates: list[datetime]) -> list[list[str]]:
        with self.engine.connect() as conn:
            return trigger_repo.external_group_states(conn, dag_id, task_group_id,
                                                      logical_dates)


def make_state_reader(engine: Engine) -> DatabaseStateReader:
    return DatabaseStateReader(engine)
