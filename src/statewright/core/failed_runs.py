"""Airflow's ``max_consecutive_failed_dag_runs``: when a DAG is paused for its failed runs.

Decided when a run of the DAG ends failed, over the DAG's newest runs (newest first, by
``run_after`` as Airflow orders them): the DAG is paused when the limit is on (more than 0) and
the ``limit`` newest runs all ended failed. A newer run still queued or running, or fewer runs
than the limit, keeps the DAG unpaused.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["FAILED", "PAUSED_EVENT", "pause_reason", "pauses_dag"]

FAILED = "failed"
PAUSED_EVENT = "paused"
"""The audit log's action for a pause, as Airflow names the event."""


def pauses_dag(newest_first: Sequence[str], limit: int) -> bool:
    """Whether the DAG is to be paused, given the states of its newest runs (newest first)."""
    if limit <= 0:
        return False
    last = list(newest_first[:limit])
    return len(last) >= limit and all(state == FAILED for state in last)


def pause_reason(limit: int, run_ids: Sequence[str]) -> str:
    """Why the scheduler paused the DAG, for people: the limit and the runs that failed."""
    return (f"the last {limit} DAG runs ended failed (max_consecutive_failed_dag_runs="
            f"{limit}): {', '.join(run_ids[:limit])}")
