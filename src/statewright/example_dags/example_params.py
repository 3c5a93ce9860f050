"""Params and templates: trigger this DAG from the web UI to see the form its params make.

Each param has a JSON Schema (an integer between 1 and 90, one of three regions, a boolean); the
trigger dialog builds a form from them and refuses values outside the schema. The tasks read the
params in Jinja templates (``{{ params.days }}``, ``{{ macros.ds_add(ds, -params.days) }}``) and
as arguments. One run with the defaults succeeds.
"""

from __future__ import annotations

from typing import Any

from statewright.sdk import DAG, BashOperator, Param, task

with DAG(
    "example_params",
    schedule=None,
    tags=["example"],
    params={
        "days": Param(7, type="integer", minimum=1, maximum=90, title="Days back",
                      description="How many days before the logical date the report covers"),
        "region": Param("eu", enum=["eu", "us", "apac"], description="Which region's data"),
        "dry_run": Param(False, type="boolean", description="Only print what would be done"),
    },
) as dag:
    window = BashOperator(
        task_id="window",
        bash_command='echo "{{ params.region }}: '
                     '{{ macros.ds_add(ds, -params.days) }} to {{ ds }}"',
    )

    @task
    def report(window: str, params: dict[str, Any] | None = None) -> str:
        params = params or {}
        prefix = "(dry run) " if params.get("dry_run") else ""
        return f"{prefix}report for {window}"

    report(window.output)
