"""CLI commands: human in the loop — ``tasks required-actions`` lists the task instances
awaiting a person's input; ``tasks respond`` answers one (recorded as ``cli:$USER``)."""

from __future__ import annotations

import json
from typing import Any

import click

from statewright.cli.identity import cli_actor
from statewright.cli.output import console, fail, friendly
from statewright.core.auth import Role


def register(cli: click.Group) -> None:
    """Add this module's commands to the ``tasks`` group."""
    tasks = cli.commands["tasks"]
    assert isinstance(tasks, click.Group)
    tasks.add_command(tasks_respond)
    tasks.add_command(tasks_required_actions)


@click.command("respond")
@click.argument("dag_id")
@click.argument("run_id")
@click.argument("task_id")
@click.option("--map-index", type=click.IntRange(min=-1), default=-1, show_default=True,
              help="The instance of a mapped task.")
@click.option("--option", "options", multiple=True, required=True,
              help="An option to choose (repeat for several when the request allows).")
@click.option("--params-json", default=None,
              help="The form's values as a JSON object, e.g. '{\"count\": 3}'.")
@click.pass_obj
@friendly
def tasks_respond(app: Any, dag_id: str, run_id: str, task_id: str, map_index: int,
                  options: tuple[str, ...], params_json: str | None) -> None:
    """Respond to TASK_ID of RUN_ID of DAG_ID, awaiting input: it resumes with the response."""
    from statewright.core.clock import utcnow
    from statewright.services import hitl as hitl_service

    params: dict[str, Any] = {}
    if params_json:
        try:
            params = json.loads(params_json)
        except json.JSONDecodeError as exc:
            fail(f"--params-json is not valid JSON: {exc}. Example: --params-json "
                 "'{\"count\": 3}'. Nothing was changed.", 2)
        if not isinstance(params, dict):
            fail("--params-json must be a JSON object, e.g. '{\"count\": 3}'. Nothing was "
                 "changed.", 2)
    app.ensure_schema()
    actor = cli_actor()
    # The command line holds the database: it may respond for any role a request names.
    responder = hitl_service.Responder(actor.name, [r.value for r in Role], actor)
    try:
        row = hitl_service.respond(app.engine, dag_id, run_id, task_id,
                                   chosen_options=list(options), params_input=params,
                                   responder=responder, now=utcnow(), map_index=map_index)
    except hitl_service.NotAwaitingInput as exc:
        fail(str(exc), 3)
    except hitl_service.NotAllowed as exc:
        fail(str(exc), 4)
    console.print(f"responded to {task_id} of {dag_id} run {run_id}: "
                  f"{', '.join(row.chosen_options)}; it resumes (now {row.state})",
                  highlight=False, markup=False, soft_wrap=True)


@click.command("required-actions")
@click.argument("dag_id", required=False)
@click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table")
@click.pass_obj
@friendly
def tasks_required_actions(app: Any, dag_id: str | None, output: str) -> None:
    """The task instances awaiting a person's input (of DAG_ID, or of every DAG)."""
    from rich.table import Table

    from statewright.db.repositories import hitl as hitl_repo

    app.ensure_schema()
    with app.engine.connect() as conn:
        rows = hitl_repo.listing(conn, dag_id=dag_id, pending=True, limit=1000)
    if output == "json":
        click.echo(json.dumps([{
            "dag_id": r.dag_id, "run_id": r.run_id, "task_id": r.task_id,
            "map_index": r.map_index, "subject": r.subject, "options": r.options,
            "multiple": r.multiple, "params": r.params, "respondents": r.respondents,
            "timeout_at": r.timeout_at.isoformat() if r.timeout_at else None} for r in rows],
            indent=2))
        return
    table = Table("dag_id", "run_id", "task_id", "subject", "options", "times out")
    for r in rows:
        label = r.task_id if r.map_index < 0 else f"{r.task_id}[{r.map_index}]"
        table.add_row(r.dag_id, r.run_id, label, r.subject, ", ".join(r.options),
                      r.timeout_at.isoformat() if r.timeout_at else "never")
    console.print(table)
