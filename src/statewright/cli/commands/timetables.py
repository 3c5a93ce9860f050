"""CLI commands: timetables — ``dags next-execution`` (the schedule in words, the next runs)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from statewright.cli.output import console, friendly
from statewright.core.errors import StatewrightError

if TYPE_CHECKING:
    from statewright.cli.app import App


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    dags = cli.commands["dags"]
    assert isinstance(dags, click.Group)
    dags.add_command(dags_next_execution)


@click.command("next-execution")
@click.argument("dag_id")
@click.option("--num-executions", "-n", type=click.IntRange(min=1, max=1000), default=1,
              show_default=True, help="How many of the next runs to show.")
@click.option("--output", "-o", type=click.Choice(["table", "json"]), default="table")
@click.pass_obj
@friendly
def dags_next_execution(app: App, dag_id: str, num_executions: int, output: str) -> None:
    """Explain DAG_ID's schedule in words and show its next runs (Airflow's command)."""
    from statewright.cli.commands.scheduling import _sync
    from statewright.core.clock import utcnow
    from statewright.services.timetable_view import next_executions

    _sync(app)
    with app.engine.connect() as conn:
        found = next_executions(conn, dag_id, count=num_executions, now=utcnow())
    if found is None:
        raise StatewrightError(f"No DAG with id {dag_id!r} is known; `statewright dags list` "
                               "shows the DAGs.")
    if output == "json":
        click.echo(json.dumps(found, default=_iso, indent=2))
        return
    console.print(f"[bold]{dag_id}[/]: {found['description']}"
                  + (" (paused)" if found["paused"] else ""), highlight=False)
    if not found["runs"]:
        console.print("No run is scheduled.")
        return
    table = Table("logical date", "data interval", "created after", "partition key")
    for r in found["runs"]:
        table.add_row(_iso(r["logical_date"]),
                      f"{_iso(r['data_interval_start'])} - {_iso(r['data_interval_end'])}",
                      _iso(r["run_after"]), r["partition_key"] or "")
    console.print(table)


def _iso(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)
