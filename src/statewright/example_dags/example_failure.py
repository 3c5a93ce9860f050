"""A run that fails: the failure propagates as upstream_failed; a cleanup task runs anyway."""

from __future__ import annotations

from datetime import datetime

from statewright.sdk import DAG, BashOperator, EmptyOperator

with DAG("example_failure", start_date=datetime(2026, 1, 1), schedule=None, tags=["example"]):
    broken = BashOperator(task_id="broken", bash_command="echo 'about to fail'; exit 3")
    publish = EmptyOperator(task_id="publish")
    cleanup = BashOperator(task_id="cleanup", bash_command="echo cleaning up",
                           trigger_rule="all_done")
    broken >> [publish, cleanup]
