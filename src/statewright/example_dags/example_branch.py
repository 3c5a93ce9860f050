"""Branching: one path runs, the other is skipped, and the join still runs."""

from __future__ import annotations

from datetime import datetime

from statewright.sdk import DAG, EmptyOperator, task

with DAG("example_branch", start_date=datetime(2026, 1, 1), schedule=None, tags=["example"]):

    @task.branch
    def choose(**context: object) -> str:
        conf = context["dag_run"].conf  # type: ignore[attr-defined]
        return "weekend" if conf.get("weekend") else "weekday"

    weekday = EmptyOperator(task_id="weekday")
    weekend = EmptyOperator(task_id="weekend")
    join = EmptyOperator(task_id="join", trigger_rule="none_failed_min_one_success")
    choose() >> [weekday, weekend] >> join
