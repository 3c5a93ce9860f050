"""CLI commands: ``statewright assets list|events|emit|dag``."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _dump(value: Any) -> str:
    return json.dumps(value, default=_json_default)


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    from statewright.cli.output import console, fail, friendly, output_option, print_rows

    @cli.group("assets")
    def assets() -> None:
        """Assets, their events, and the DAGs that produce and consume them."""

    @assets.command("list")
    @output_option
    @click.pass_obj
    @friendly
    def assets_list(app: Any, output: str) -> None:
        """Each asset: URI, producing tasks, consuming DAGs, events, watchers."""
        from statewright.services import asset_view

        app.ensure_schema()
        with app.engine.connect() as conn:
            items = asset_view.list_assets(conn)
        if output == "json":
            click.echo(_dump(items))
            return
        if output == "table" and not items:
            console.print("no assets: no DAG declares one yet")
            return
        if output == "yaml":
            print_rows(json.loads(_dump(items)), output, [])
            return
        print_rows([{"name": a["name"], "uri": a["uri"],
                     "produced by": ", ".join(f"{d}.{t}" for d, t in a["producing_tasks"]),
                     "consumed by": ", ".join(a["consuming_dags"]), "events": a["events"],
                     "last event": a["last_event_at"],
                     "watchers": ", ".join(w["name"] for w in a["watchers"])} for a in items],
                   output, ["name", "uri", "produced by", "consumed by", "events", "last event",
                            "watchers"])

    @assets.command("events")
    @click.option("--asset", "asset_name", help="Only events of this asset (name).")
    @click.option("--dag", "dag_id", help="Only events produced by this DAG.")
    @click.option("--limit", default=100, show_default=True)
    @output_option
    @click.pass_obj
    @friendly
    def assets_events(app: Any, asset_name: str | None, dag_id: str | None, limit: int,
                      output: str) -> None:
        """Asset events, newest first."""
        from statewright.db.repositories import asset_events as event_repo

        app.ensure_schema()
        with app.engine.connect() as conn:
            events = event_repo.list_events(conn, asset_name=asset_name, source_dag_id=dag_id,
                                            limit=limit)
        if output == "json":
            click.echo(_dump(events))
            return
        if output == "yaml":
            print_rows(json.loads(_dump(events)), output, [])
            return
        print_rows([{"id": e["id"], "asset": e["asset"]["name"], "time": e["timestamp"],
                     "source": (f"{e['source_dag_id']}.{e['source_task_id']} "
                                f"({e['source_run_id']})" if e["source_dag_id"]
                                else e["source"]),
                     "extra": _dump(e["extra"])} for e in events], output,
                   ["id", "asset", "time", "source", "extra"])

    @assets.command("emit")
    @click.argument("asset")
    @click.option("--extra", default=None, help='A JSON object, e.g. \'{"rows": 10}\'.')
    @click.pass_obj
    @friendly
    def assets_emit(app: Any, asset: str, extra: str | None) -> None:
        """Record an event of ASSET (its name or URI): the DAGs scheduled on it are queued."""
        from statewright.core.clock import utcnow
        from statewright.db.engine import transaction
        from statewright.services.asset_events import emit

        try:
            data = json.loads(extra) if extra is not None else {}
        except json.JSONDecodeError as exc:
            fail(f"--extra is not valid JSON: {exc}. Example: --extra '{{\"rows\": 10}}'. "
                 "Nothing was recorded.", 2)
        if not isinstance(data, dict):
            fail(f"--extra must be a JSON object, got {type(data).__name__}. Nothing was "
                 "recorded.", 2)
        app.ensure_schema()
        with transaction(app.engine) as conn:
            event = emit(conn, asset, extra=data, now=utcnow(), source="cli")
        console.print(f"asset event {event['id']} recorded for {event['asset']['name']} "
                      f"({event['asset']['uri']})", highlight=False)

    @assets.command("dag")
    @click.argument("dag_id")
    @click.pass_obj
    @friendly
    def assets_dag(app: Any, dag_id: str) -> None:
        """A DAG's asset condition and what it still waits for (JSON)."""
        from statewright.services import asset_view

        app.ensure_schema()
        with app.engine.connect() as conn:
            found = asset_view.dag_assets(conn, dag_id)
        if found is None:
            fail(f"No DAG with id {dag_id!r} is known; `statewright dags list` lists them.")
        click.echo(_dump(found))
