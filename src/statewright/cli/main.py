"""The ``statewright`` command line."""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import click
from rich.markup import escape

from statewright.cli.app import App, configure_logging
from statewright.cli.help import RootGroup
from statewright.cli.identity import cli_actor
from statewright.cli.output import (
    confirm,
    console,
    err,
    friendly,
    output_option,
    print_rows,
    print_table,
    yes_option,
)
from statewright.cli.output import parse_conf as _parse_conf
from statewright.cli.output import parse_logical_date as _parse_logical_date
from statewright.cli.standalone import _run_services as _run_services
from statewright.cli.standalone import _start_examples as _start_examples
from statewright.core.errors import StatewrightError

F = TypeVar("F", bound=Callable[..., Any])


@click.group(cls=RootGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="statewright")
@click.pass_context
@friendly  # a bad setting is one clear paragraph, not a traceback
def cli(ctx: click.Context) -> None:
    """statewright: workflows on persisted state machines."""
    ctx.obj = App()
    ctx.call_on_close(ctx.obj.close)  # the command's database connections end with it


# -- db ----------------------------------------------------------------------------------------


@cli.group()
def db() -> None:
    """The metadata database."""


@db.command("migrate")
@click.pass_obj
@friendly
def db_migrate(app: App) -> None:
    """Create or upgrade the schema (safe to repeat)."""
    from statewright.db.migrate import migrate

    rev = migrate(app.engine)
    console.print(f"database at revision [bold]{rev}[/] ({app.engine.url.render_as_string()})")


@db.command("reset")
@yes_option
@click.pass_obj
@friendly
def db_reset(app: App, yes: bool) -> None:
    """Drop every table and migrate again: all runs and history are lost."""
    from statewright.db.migrate import reset

    confirm("This deletes every DAG run and all history. Continue?", yes=yes)
    reset(app.engine)
    console.print("database reset")


# -- dags --------------------------------------------------------------------------------------


@cli.group()
def dags() -> None:
    """DAGs and their runs."""


def _sync(app: App, include_examples: bool | None = None) -> None:
    from statewright.cli.commands.scheduling import processor_for

    app.ensure_schema()
    processor_for(app).run_once()


@dags.command("list")
@output_option
@click.pass_obj
@friendly
def dags_list(app: App, output: str) -> None:
    """DAGs found in the DAGs folder; files that failed to import are marked and listed."""
    from statewright.db.repositories import dags as dag_repo
    from statewright.db.repositories import import_errors

    _sync(app)
    with app.engine.connect() as conn:
        rows = dag_repo.list_dags(conn)
        broken = sorted(e.filename for e in import_errors.list_all(conn))
    listed = [{"dag_id": r.dag_id, "fileloc": r.fileloc, "paused": r.is_paused,
               "schedule": r.schedule_summary, "tasks": len(r.serialized["tasks"]),
               "import_error": r.fileloc in broken, "dag_display_name": _display_name(r)}
              for r in rows]
    named = any(d["dag_display_name"] != d["dag_id"] for d in listed)
    for d in listed:
        d["file"] = f"{d['fileloc'] or ''}{'  (IMPORT ERROR)' if d['import_error'] else ''}"
        d["schedule_shown"] = d["schedule"] or "None"
    print_rows(listed, output, ["dag_id", "tasks", "paused", "schedule_shown", "file",
                                *(["dag_display_name"] if named else [])],
               labels={"schedule_shown": "schedule", "dag_display_name": "display name"})
    if broken:
        out = console if output == "table" else err  # json/yaml/plain stay parseable
        out.print(f"[red]{len(broken)} file(s) failed to import[/] (their DAGs above are as last "
                  "imported; `statewright dags errors` shows the errors):", highlight=False)
        for name in broken:
            out.print(f"  {name}", highlight=False, markup=False, soft_wrap=True)


def _display_name(row: Any) -> str:
    return str((row.serialized or {}).get("dag_display_name") or row.dag_id)


@dags.command("trigger")
@click.argument("dag_id")
@click.option("--conf", "-c", help="JSON object passed to the run as dag_run.conf.")
@click.option("--run-id", "-r", help="Run id (default manual__<time>).")
@click.option("--logical-date", "-l", callback=lambda _c, _p, v: _parse_logical_date(v),
              help="The run's logical date, ISO 8601 (UTC when it names no zone; default: "
                   "now). A DAG has one run per logical date.")
@click.option("--partition-key", help="The run's partition key (checked against the DAG's "
                                      "timetable).")
@click.pass_obj
@friendly
def dags_trigger(app: App, dag_id: str, conf: str | None, run_id: str | None,
                 logical_date: Any = None,
                 partition_key: str | None = None) -> None:
    """Create a manual run of DAG_ID (the scheduler runs it)."""
    from statewright.core.clock import utcnow
    from statewright.db.engine import transaction
    from statewright.services.dag_runs import trigger_dag

    conf_obj = _parse_conf(conf)
    from statewright.db.repositories import dags as dag_repo

    _sync(app)
    with transaction(app.engine) as conn:
        _, rid = trigger_dag(conn, dag_id, now=utcnow(), actor=cli_actor(), conf=conf_obj,
                             run_id=run_id, logical_date=logical_date,
                             partition_key=partition_key)
        row = dag_repo.get_dag(conn, dag_id)
    console.print(f"created run [bold]{rid}[/] of {dag_id} (queued)", soft_wrap=True)
    if row is not None and row.is_paused:
        err.print(f"[yellow]warning:[/] DAG {dag_id} is paused: the run stays queued until "
                  f"`statewright dags unpause {dag_id}`.", highlight=False, soft_wrap=True)


@dags.command("test")
@click.argument("dag_id")
@click.option("--conf", "-c", help="JSON object passed as dag_run.conf.")
@click.pass_obj
@friendly
def dags_test(app: App, dag_id: str, conf: str | None) -> None:
    """Run one DAG run of DAG_ID in this process, showing each task as it finishes."""
    from statewright.services.dag_test import run_dag_test

    conf_obj = _parse_conf(conf)
    found = _load_for_test(app, dag_id)
    if found is None:
        raise StatewrightError(
            f"No DAG with id {dag_id!r} in {app.settings.dags_folder} nor in the example "
            "DAGs. Run `statewright dags "
            "list` to see the DAGs, and `statewright dags errors` for files that failed.")
    colors = {"success": "green", "failed": "red", "up_for_retry": "yellow", "skipped": "magenta"}

    def progress(w: Any, r: Any) -> None:
        label = w.task_id if w.map_index < 0 else f"{w.task_id}[{w.map_index}]"
        task = found.task_dict.get(w.task_id)
        if task is not None and task.task_display_name != task.task_id:
            label += f" ({task.task_display_name})"
        label = escape(label)
        console.print(f"  {label:<30} try {w.try_number}  [{colors.get(r.kind, 'white')}]"
                      f"{r.kind}[/]{'  ' + r.error if r.error else ''}", highlight=False)

    shown = "" if found.dag_display_name == dag_id else f" ({found.dag_display_name})"
    console.print(f"testing [bold]{dag_id}[/]{escape(shown)}")
    res = run_dag_test(found, conf=conf_obj, on_result=progress)
    _print_tis(list(res.task_instances.values()))
    color = "green" if res.state.value == "success" else "red"
    console.print(f"run {res.run_id}: [{color}]{res.state.value}[/]")
    if res.state.value != "success":
        sys.exit(1)


def _load_for_test(app: App, dag_id: str) -> Any:
    """The DAG ``dag_id`` loaded from its file: the file the database knows for it (so every
    DAG ``dags list`` shows, the bundled examples included), else the first file of the DAGs
    folder, then of the example DAGs, that defines it."""
    from pathlib import Path

    from statewright.sdk.loader import load_dag_file

    known: list[Path] = []
    try:
        from statewright.db.repositories import dags as dag_repo

        with app.engine.connect() as conn:
            row = dag_repo.get_dag(conn, dag_id)
        if row is not None and row.fileloc:
            known.append(Path(row.fileloc))
    except Exception:  # no database yet: `dags test` needs none
        pass
    folders = (app.settings.dags_folder, app.example_dags_folder())
    candidates = [*known, *(p for f in folders if f.is_dir() for p in sorted(f.rglob("*.py")))]
    for path in candidates:
        result = load_dag_file(path)
        if dag_id in result.dags:
            return result.dags[dag_id]
    return None


@dags.command("runs")
@click.argument("dag_id", required=False)
@click.option("--limit", default=20, show_default=True)
@output_option
@click.pass_obj
@friendly
def dags_runs(app: App, dag_id: str | None, limit: int, output: str) -> None:
    """Recent DAG runs (run ids whole in every format)."""
    from statewright.db.repositories import runs as run_repo

    app.ensure_schema()
    with app.engine.connect() as conn:
        rows = run_repo.list_runs(conn, dag_id, limit)
    listed = [{"dag_id": r.dag_id, "run_id": r.run_id, "run_type": r.run_type, "state": r.state,
               "state_name": r.state_name, **{k: _iso(getattr(r, k)) for k in _RUN_TIMES},
               "queued": _t(r.queued_at), "started": _t(r.start_date), "ended": _t(r.end_date)}
              for r in rows]
    if output in ("json", "yaml"):
        for d in listed:
            del d["queued"], d["started"], d["ended"]
    print_rows(listed, output, ["dag_id", "run_id", "state", "state_name", "queued", "started",
                                "ended"], labels={"state_name": "name"})


def _t(v: Any) -> str:
    return v.strftime("%Y-%m-%d %H:%M:%S") if v else ""


_RUN_TIMES = ("logical_date", "run_after", "queued_at", "start_date", "end_date")


def _iso(v: Any) -> str | None:
    return v.isoformat() if v else None


# -- tasks -------------------------------------------------------------------------------------


@cli.group()
def tasks() -> None:
    """Task instances: states, history, controls."""


def _find_run(app: App, run_id: str, dag_id: str | None) -> Any:
    from statewright.db.repositories import runs as run_repo

    app.ensure_schema()
    with app.engine.connect() as conn:
        runs = run_repo.find_by_run_id(conn, run_id)
    if dag_id:
        runs = [r for r in runs if r.dag_id == dag_id]
    if not runs:
        raise StatewrightError(
            f"No DAG run with run id {run_id!r}. `statewright dags runs` lists recent runs.")
    if len(runs) > 1:
        raise StatewrightError(
            f"Run id {run_id!r} exists in several DAGs ({', '.join(r.dag_id for r in runs)}); "
            "pass --dag-id.")
    return runs[0]


def _print_tis(tis: list[Any]) -> None:
    rows = []
    for t in tis:
        index = getattr(t, "map_index", -1)
        name = getattr(t, "rendered_map_index", None)
        rows.append({"task_id": t.task_id,
                     "map_index": "" if index < 0 else f"{index} {name or ''}".strip(),
                     "state": str(getattr(t.state, "value", t.state)), "name": t.state_name,
                     "try": t.try_number, "message": (t.state_message or "")[:80]})
    print_table(rows, ["task_id", "map_index", "state", "name", "try", "message"])


@tasks.command("list")
@click.argument("dag_id")
@output_option
@click.pass_obj
@friendly
def tasks_list(app: App, dag_id: str, output: str) -> None:
    """The tasks of DAG_ID: operator, upstream, trigger rule, retries, timeout, pool."""
    from statewright.core.durations import duration_words
    from statewright.db.repositories import dags as dag_repo

    _sync(app)
    with app.engine.connect() as conn:
        row = dag_repo.get_dag(conn, dag_id)
    if row is None:
        raise StatewrightError(f"No DAG with id {dag_id!r}; see `statewright dags list`.")
    listed = [{"task_id": t["task_id"], "operator": t["operator"],
               "upstream": ", ".join(t["upstream"]), "trigger_rule": t["trigger_rule"],
               "retries": t["retries"], "retry_delay": duration_words(t["retry_delay"]),
               "execution_timeout": duration_words(t["execution_timeout"]), "pool": t["pool"]}
              for t in row.serialized["tasks"]]
    print_rows(listed, output, ["task_id", "operator", "upstream", "trigger_rule", "retries",
                                "retry_delay", "execution_timeout", "pool"])


@tasks.command("states")
@click.argument("run_id")
@click.option("--dag-id", help="The DAG, when the run id is not unique.")
@output_option
@click.pass_obj
@friendly
def tasks_states(app: App, run_id: str, dag_id: str | None, output: str) -> None:
    """State, state name and try number of every task instance of RUN_ID."""
    from statewright.db.repositories import task_instances as ti_repo

    run = _find_run(app, run_id, dag_id)
    with app.engine.connect() as conn:
        tis = ti_repo.by_run(conn, run.id)
    listed = [{"task_id": t.task_id, "map_index": t.map_index,
               "rendered_map_index": t.rendered_map_index, "state": t.state,
               "state_name": t.state_name, "try_number": t.try_number} for t in tis]
    if output == "json":
        click.echo(json.dumps({"dag_id": run.dag_id, "run_id": run.run_id, "state": run.state,
                               "task_instances": listed}))
        return
    if output == "yaml":
        import yaml

        click.echo(yaml.safe_dump({"dag_id": run.dag_id, "run_id": run.run_id,
                                   "state": run.state, "task_instances": listed},
                                  sort_keys=False), nl=False)
        return
    if output == "plain":
        print_rows(listed, output, ["task_id", "map_index", "state", "state_name",
                                    "try_number"])
        return
    console.print(f"{run.dag_id} / {run.run_id}: [bold]{run.state}[/] ({run.state_name})",
                  highlight=False, soft_wrap=True)
    _print_tis(tis)


@tasks.command("history")
@click.argument("run_id")
@click.argument("task_id")
@click.option("--dag-id", help="The DAG, when the run id is not unique.")
@click.option("--map-index", type=click.IntRange(min=-1), default=None,
              help="One instance of a mapped task (all of them when left out).")
@output_option
@click.pass_obj
@friendly
def tasks_history(app: App, run_id: str, task_id: str, dag_id: str | None,
                  map_index: int | None, output: str) -> None:
    """Every state change of TASK_ID in RUN_ID: map index, from, to, name, actor, try, time."""
    from statewright.db.repositories import task_instances as ti_repo
    from statewright.db.repositories import transitions_log

    run = _find_run(app, run_id, dag_id)
    with app.engine.connect() as conn:
        tis = [t for t in ti_repo.mapped_instances(conn, run.id, task_id)
               if map_index is None or t.map_index == map_index]
        if not tis:
            which = "" if map_index is None else f" of map index {map_index}"
            raise StatewrightError(
                f"Run {run_id} of {run.dag_id} has no task instance {task_id!r}{which}; "
                f"`statewright tasks states {run_id}` lists them.")
        rows = sorted((r for t in tis for r in transitions_log.for_task_instance(conn, t.id)),
                      key=lambda r: r.id)
    mapped = any(r.map_index is not None and r.map_index >= 0 for r in rows)
    columns = ["at", *(["map_index"] if mapped else []), "from", "to", "name", "actor", "try",
               "message"]  # the map_index column only for a mapped task
    if output != "table":
        print_rows([{"at": r.at, "map_index": r.map_index, "from": r.from_state,
                     "to": r.to_state, "name": r.name, "actor": r.actor, "try": r.try_number,
                     "message": r.message} for r in rows], output, columns)
        return
    print_table([{"at": r.at.strftime("%H:%M:%S.%f")[:-3], "map_index": r.map_index,
                  "from": r.from_state or "(created)", "to": r.to_state, "name": r.name,
                  "actor": r.actor, "try": r.try_number, "message": (r.message or "")[:70]}
                 for r in rows], columns)


# -- services (what they start: statewright.cli.standalone) -------------------------------------


@cli.command()
@click.pass_obj
@friendly
def scheduler(app: App) -> None:
    """Run the scheduler with the executor STATEWRIGHT_EXECUTOR names (local or celery)."""
    _run_services(app, with_processor=False)


@cli.command("dag-processor")
@click.pass_obj
@friendly
def dag_processor(app: App) -> None:
    """Run the DAG processor alone: import the DAG files as they change, record import errors
    (the scheduler command does not; standalone does)."""
    from statewright.cli.commands.scheduling import processor_for

    configure_logging()
    app.as_service().ensure_schema()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    console.print(f"DAG processor reading {app.settings.dags_folder}; database "
                  f"{app.engine.url.render_as_string()}. Ctrl-C stops.", highlight=False)
    processor_for(app).run_forever(stop)
    console.print("DAG processor stopped")


@cli.command("api-server")
@click.option("--host", help="Interface to listen on (default STATEWRIGHT_API_HOST or 127.0.0.1).")
@click.option("--port", type=int, help="Port to listen on (default STATEWRIGHT_API_PORT or 8080).")
@click.pass_obj
@friendly
def api_server(app: App, host: str | None, port: int | None) -> None:
    """Serve the REST API (Airflow's /api/v2, statewright's extras on /api/v1, docs at
    /api/docs) and the web UI."""
    from statewright.api.server import make_server

    configure_logging()
    app.ensure_schema()
    server = make_server(app.engine, app.settings, host=host, port=port, log_level="info")
    console.print(f"statewright web UI and REST API at [bold]{server.url}[/] "
                  f"(API docs: {server.url}api/docs). Ctrl-C stops.", soft_wrap=True)
    server.run()



@cli.command()
@click.option("--examples/--no-examples", default=None,
              help="Load the bundled example DAGs and run each once (default: "
                   "STATEWRIGHT_LOAD_EXAMPLES, false).")
@click.pass_obj
@friendly
def standalone(app: App, examples: bool | None) -> None:
    """Run everything on this machine: DAG processor, scheduler, executor, triggerer, and the
    web UI and REST API (STATEWRIGHT_API_HOST:STATEWRIGHT_API_PORT, default 127.0.0.1:8080)."""
    from statewright.cli.commands.users import initial_admin

    initial_admin(app)
    _run_services(app, with_processor=True, with_api=True,
                  examples=app.settings.load_examples if examples is None else examples,
                  with_triggerer=True)


@cli.group()
def config() -> None:
    """Settings helpers."""


@config.command("fernet-key")
def config_fernet_key() -> None:
    """Print a new Fernet key for STATEWRIGHT_FERNET_KEY."""
    from statewright.crypto import generate_key

    click.echo(generate_key())


def _register_command_modules() -> None:
    import importlib

    from statewright.cli import commands

    for name in commands.MODULES:
        importlib.import_module(f"statewright.cli.commands.{name}").register(cli)


_register_command_modules()


def _private_umask() -> None:
    """New files of this process and its children 0600, folders 0700 (0640/0750 with
    STATEWRIGHT_FILES_GROUP_READABLE): the database, its WAL, keys and logs."""
    from statewright.config import load_settings
    from statewright.file_modes import apply_umask

    try:
        apply_umask(load_settings())
    except StatewrightError:
        pass  # a bad setting: the command itself says what is wrong


def main() -> None:
    _private_umask()
    try:
        cli(standalone_mode=True)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
