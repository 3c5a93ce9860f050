"""``tasks state DAG RUN TASK`` and ``assets state ASSET``: durable state, as stored."""

from __future__ import annotations

import json
from typing import Any

import click

__all__ = ["register"]


def _text(value: Any) -> str:
    return json.dumps(value, default=str)


def _print(rows: list[dict[str, Any]], output: str, columns: tuple[str, ...],
           empty: str) -> None:
    from rich.table import Table

    from statewright.cli.output import console

    if output == "json":
        click.echo(json.dumps(rows, default=str, indent=2))
        return
    if not rows:
        console.print(empty, markup=False, highlight=False)
        return
    table = Table(*columns)
    for row in rows:
        table.add_row(*(_text(row[c]) if c == "value" else str(row[c] if row[c] is not None
                                                               else "") for c in columns))
    console.print(table)


def register(cli: click.Group) -> None:
    from statewright.cli.output import friendly

    tasks = cli.commands["tasks"]
    assets = cli.commands["assets"]
    assert isinstance(tasks, click.Group) and isinstance(assets, click.Group)

    @tasks.command("state")
    @click.argument("dag_id")
    @click.argument("run_id")
    @click.argument("task_id")
    @click.option("--map-index", type=click.IntRange(min=-1, max=2**31 - 1), default=None,
                  help="Only this map index of a mapped task.")
    @click.option("--output", "-o", type=click.Choice(["table", "json"]), default="table")
    @click.pass_obj
    @friendly
    def tasks_state(app: Any, dag_id: str, run_id: str, task_id: str, map_index: int | None,
                    output: str) -> None:
        """The task state TASK_ID keeps in run RUN_ID of DAG_ID (key, value, retention)."""
        from statewright.services.task_state_view import task_state

        app.ensure_schema()
        with app.engine.connect() as conn:
            rows = task_state(conn, dag_id, run_id, task_id, map_index)
        _print(rows, output, ("map_index", "key", "value", "retention", "try_number",
                              "updated_at"),
               f"no task state kept by {dag_id}.{task_id} in run {run_id}")

    @assets.command("state")
    @click.argument("asset")
    @click.option("--output", "-o", type=click.Choice(["table", "json"]), default="table")
    @click.pass_obj
    @friendly
    def assets_state(app: Any, asset: str, output: str) -> None:
        """The state kept on ASSET (its name) by the tasks that produce and consume it."""
        from statewright.services.task_state_view import asset_state

        app.ensure_schema()
        with app.engine.connect() as conn:
            rows = asset_state(conn, asset)
        _print(rows, output, ("key", "value", "written_by", "updated_at"),
               f"no state kept on asset {asset}")
