"""Task groups and TaskFlow: a sensor waits for the input, two regions are processed in groups
(each a call of one ``@task_group``), a labelled edge leads to the report. Every task succeeds;
the report's value is ``{"emea": 60, "apac": 15}``."""

from __future__ import annotations

import pendulum

from statewright.sdk import DAG, Label, PokeReturnValue, TaskGroup, task, task_group


@task.sensor(poke_interval=5, timeout=60, mode="reschedule")
def wait_for_input() -> PokeReturnValue:
    return PokeReturnValue(is_done=True, xcom_value={"emea": [10, 20, 30], "apac": [5, 10]})


@task(multiple_outputs=True)
def split(batches: dict[str, list[int]]) -> dict[str, list[int]]:
    return batches


@task
def clean(values: list[int]) -> list[int]:
    return [v for v in values if v >= 0]


@task
def total(values: list[int]) -> int:
    return sum(values)


@task_group
def region(values: list[int]) -> object:
    """Clean one region's values, then add them up."""
    return total(clean(values))


@task
def report(emea: int, apac: int) -> dict[str, int]:
    return {"emea": emea, "apac": apac}


with DAG(
    "example_task_groups",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    schedule=None,
    tags=["example"],
    doc_md=__doc__,
):
    with TaskGroup("ingest", tooltip="Wait for the input and split it by region"):
        parts = split(wait_for_input())
    emea = region.override(group_id="emea")(parts["emea"])
    apac = region.override(group_id="apac")(parts["apac"])
    [emea, apac] >> Label("both totals") >> report(emea, apac)
