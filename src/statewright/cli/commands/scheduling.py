"""CLI commands: scheduling — pausing DAGs, import errors, Late runs, backfills and pools."""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from statewright.cli.output import console, friendly, parse_conf
from statewright.core.errors import StatewrightError

if TYPE_CHECKING:
    from statewright.cli.app import App
    from statewright.services.dag_processor import DagProcessor
    from statewright.services.scheduler.steps import Step


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    dags = cli.commands["dags"]
    assert isinstance(dags, click.Group)
    for command in (dags_pause, dags_unpause, dags_errors, dags_late):
        dags.add_command(command)
    cli.add_command(backfill)
    cli.add_command(pools)


# -- composition helpers (used by main's services and by these commands) ----------------------


def processor_for(app: App, folder: Path | None = None) -> DagProcessor:
    """A DAG processor with the settings' folder, timeout and parallelism."""
    from statewright.services.dag_processor import DagProcessor

    s = app.settings
    return DagProcessor(app.engine, folder or s.dags_folder,
                        paused_at_creation=s.dags_are_paused_at_creation,
                        interval_seconds=s.dag_processor_interval_seconds,
                        timeout=s.dag_file_processor_timeout,
                        parallelism=s.dag_processor_parallelism)


def scheduler_steps(app: App) -> list[Step]:
    """The scheduling steps of a scheduler: runs from schedules, backfills, Late names."""
    from statewright.db.engine import transaction
    from statewright.db.repositories import pools as pool_repo
    from statewright.services.scheduler.steps import scheduling_steps

    s = app.settings
    with transaction(app.engine) as conn:
        pool_repo.ensure_default(conn, s.default_pool_slots)
    return scheduling_steps(
        max_dagruns_per_loop=s.max_dagruns_to_create_per_loop,
        late_run_threshold=timedelta(seconds=s.late_run_threshold_seconds),
        late_task_threshold=timedelta(seconds=s.late_task_threshold_seconds))


def _sync(app: App) -> None:
    app.ensure_schema()
    processor_for(app).run_once()


def _t(v: datetime | None) -> str:
    return v.strftime("%Y-%m-%d %H:%M:%S") if v else ""


# -- dags pause / unpause / errors / late --------------------------------------------------------


@click.command("pause")
@click.argument("dag_id")
@click.pass_obj
@friendly
def dags_pause(app: App, dag_id: str) -> None:
    """Stop DAG_ID's scheduled runs being created, its queued runs starting and its tasks
    being queued."""
    _set_paused(app, dag_id, True)


@click.command("unpause")
@click.argument("dag_id")
@click.pass_obj
@friendly
def dags_unpause(app: App, dag_id: str) -> None:
    """Let DAG_ID's runs be created and started again."""
    _set_paused(app, dag_id, False)


def _set_paused(app: App, dag_id: str, paused: bool) -> None:
    from statewright.db.engine import transaction
    from statewright.db.repositories import dags as dag_repo

    _sync(app)
    with transaction(app.engine) as conn:
        if not dag_repo.set_paused(conn, dag_id, paused):
            raise StatewrightError(f"No DAG with id {dag_id!r}; see `statewright dags list`.")
    console.print(f"{dag_id} {'paused' if paused else 'unpaused'}")


@click.command("errors")
@click.pass_obj
@friendly
def dags_errors(app: App) -> None:
    """Files in the DAGs folder that failed to import, with the error (exit code 1 if any)."""
    from statewright.db.repositories import import_errors

    _sync(app)
    with app.engine.connect() as conn:
        rows = import_errors.list_all(conn)
    if not rows:
        console.print("no import errors")
        return
    for r in rows:
        console.rule(f"[red]{r.filename}[/]")
        console.print(r.stacktrace, highlight=False, markup=False)
    sys.exit(1)


@click.command("late")
@click.option("--output", "-o", type=click.Choice(["table", "json"]), default="table")
@click.pass_obj
@friendly
def dags_late(app: App, output: str) -> None:
    """Runs queued, and task instances scheduled or queued, past their Late threshold."""
    from statewright.db.repositories import scheduling as sched_repo

    app.ensure_schema()
    with app.engine.connect() as conn:
        runs = sched_repo.late_runs(conn)
        tis = sched_repo.late_task_instances(conn)
    if output == "json":
        click.echo(json.dumps({
            "runs": [{"dag_id": r.dag_id, "run_id": r.run_id, "state": r.state,
                      "queued_at": _t(r.queued_at)} for r in runs],
            "task_instances": [{"dag_id": t.dag_id, "run_id": t.run_id, "task_id": t.task_id,
                                "state": t.state, "pool": t.pool,
                                "since": _t(t.queued_at if t.state == "queued"
                                            else t.scheduled_at)} for t in tis]}))
        return
    if not runs and not tis:
        console.print("nothing is late")
        return
    if runs:
        table = Table("dag_id", "run_id", "state", "queued since", title="Late runs")
        for r in runs:
            table.add_row(r.dag_id, r.run_id, r.state, _t(r.queued_at))
        console.print(table)
    if tis:
        table = Table("dag_id", "run_id", "task_id", "state", "since", "pool",
                      title="Late task instances")
        for t in tis:
            table.add_row(t.dag_id, t.run_id, t.task_id, t.state,
                          _t(t.queued_at if t.state == "queued" else t.scheduled_at), t.pool)
        console.print(table)


# -- backfill ---------------------------------------------------------------------------------


def _parse_date(value: str, flag: str) -> datetime:
    text = value.strip()
    try:
        moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        raise StatewrightError(
            f"{flag} {value!r} is not a date: use ISO 8601, such as 2026-01-01 or "
            "2026-01-01T06:00:00+02:00 (dates without a time zone are UTC). Nothing was "
            "created.") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@click.command("backfill")
@click.argument("dag_id")
@click.option("--from-date", "--start-date", "from_date", required=True,
              help="First logical date of the range (inclusive), e.g. 2026-01-01.")
@click.option("--to-date", "--end-date", "to_date", required=True,
              help="Last logical date of the range (inclusive), e.g. 2026-01-31.")
@click.option("--reprocess-behavior", type=click.Choice(["none", "failed", "completed"]),
              default="none", show_default=True,
              help="Dates that have a finished run: leave them (none), run the failed ones "
                   "again (failed), or run every finished one again (completed).")
@click.option("--max-active-runs", type=click.IntRange(min=1), default=10, show_default=True,
              help="Runs of this backfill queued or running at the same time.")
@click.option("--run-backwards", is_flag=True, help="Newest dates first.")
@click.option("--dag-run-conf", help="JSON object passed to every run as dag_run.conf.")
@click.option("--dry-run", is_flag=True, help="Show the dates and what would happen; change "
                                               "nothing.")
@click.option("--wait", is_flag=True, help="Follow the runs with a progress bar until the "
                                            "backfill is done (a scheduler must be running).")
@click.pass_obj
@friendly
def backfill(app: App, dag_id: str, from_date: str, to_date: str, reprocess_behavior: str,
             max_active_runs: int, run_backwards: bool, dag_run_conf: str | None,
             dry_run: bool, wait: bool) -> None:
    """Create runs of DAG_ID for every scheduled time from --from-date to --to-date.

    The scheduler creates the runs in order (type backfill, run id backfill__<logical date>)
    and keeps at most --max-active-runs of them queued or running at once.
    """
    from statewright.core.clock import utcnow
    from statewright.services.backfill import create_backfill

    start = _parse_date(from_date, "--from-date")
    end = _parse_date(to_date, "--to-date")
    conf = parse_conf(dag_run_conf)
    _sync(app)
    plan = create_backfill(app.engine, dag_id, start, end, reprocess_behavior=reprocess_behavior,
                           max_active_runs=max_active_runs, run_backwards=run_backwards,
                           dag_run_conf=conf, dry_run=dry_run, now=utcnow())
    _print_plan(console, plan, dry_run)
    if dry_run:
        return
    if plan.paused:
        console.print(f"[yellow]DAG {dag_id} is paused: its runs start once you run "
                      f"`statewright dags unpause {dag_id}`.[/]")
    if wait and plan.backfill_id is not None:
        _follow(app, plan.backfill_id, len(plan.to_run))


def _print_plan(console: Any, plan: Any, dry_run: bool) -> None:
    table = Table("logical date", "action", "existing run",
                  title=f"Backfill of {plan.dag_id}" + (" (dry run)" if dry_run else ""))
    labels = {"create": "[green]create[/]", "reprocess": "[yellow]run again[/]"}
    for d in plan.dates:
        table.add_row(d.info.logical_date.isoformat(), labels.get(d.action, f"skip: {d.reason}"),
                      d.existing_run_id or "")
    console.print(table)
    n = len(plan.to_run)
    verb = "would run" if dry_run else "will run"
    console.print(f"{len(plan.dates)} date(s); {verb} {n}, at most {plan.max_active_runs} at a "
                  f"time (reprocess behavior: {plan.reprocess_behavior})"
                  + ("" if dry_run else f"; backfill id {plan.backfill_id}"), highlight=False)


def _follow(app: App, backfill_id: int, total: int) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from statewright.db.repositories import backfills as backfill_repo

    finished = {"success", "failed", "cancelled"}
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
                  console=console) as progress:
        task = progress.add_task(f"backfill {backfill_id}", total=max(total, 1), detail="")
        while True:
            with app.engine.connect() as conn:
                b = backfill_repo.get(conn, backfill_id)
                rows = backfill_repo.rows_with_state(conn, backfill_id)
            counted = [r for r in rows if r.exception_reason not in ("in_flight",
                                                                    "already_exists")]
            done = sum(1 for r in counted if r.state in finished and r.exception_reason is None)
            states: dict[str, int] = {}
            for r in counted:
                key = r.state or "waiting"
                states[key] = states.get(key, 0) + 1
            detail = ", ".join(f"{k} {v}" for k, v in sorted(states.items()))
            progress.update(task, completed=done, detail=detail)
            if b is None or b.completed_at is not None:
                progress.update(task, completed=max(total, 1) if total == 0 else done)
                break
            time.sleep(0.5)


# -- pools ------------------------------------------------------------------------------------


@click.group("pools")
def pools() -> None:
    """Pools: named slots that limit how many task instances run at once."""


@pools.command("set")
@click.argument("name")
@click.argument("slots", type=int)
@click.option("--description", help="What the pool is for.")
@click.option("--include-deferred/--no-include-deferred", default=None,
              help="Whether deferred task instances take slots (default: no).")
@click.pass_obj
@friendly
def pools_set(app: App, name: str, slots: int, description: str | None,
              include_deferred: bool | None) -> None:
    """Create pool NAME with SLOTS slots, or change it."""
    from statewright.db.engine import transaction
    from statewright.db.repositories import pools as pool_repo

    if slots < 0:
        raise StatewrightError(f"a pool needs 0 slots or more, got {slots}.")
    if not name.strip() or len(name) > 256:
        raise StatewrightError("a pool name must be 1 to 256 characters long.")
    app.ensure_schema()
    with transaction(app.engine) as conn:
        created = pool_repo.set_pool(conn, name, slots, description=description,
                                     include_deferred=include_deferred)
    console.print(f"pool {name} {'created' if created else 'updated'}: {slots} slots")


@pools.command("list")
@click.option("--output", "-o", type=click.Choice(["table", "json"]), default="table")
@click.pass_obj
@friendly
def pools_list(app: App, output: str) -> None:
    """Every pool with its slots: running, queued, deferred, scheduled and open."""
    from statewright.db.engine import transaction
    from statewright.db.repositories import pools as pool_repo

    app.ensure_schema()
    with transaction(app.engine) as conn:
        pool_repo.ensure_default(conn, app.settings.default_pool_slots)
        stats = pool_repo.slot_stats(conn)
    if output == "json":
        click.echo(json.dumps([{"pool": s.name, "slots": s.slots, "running": s.running,
                                "queued": s.queued, "deferred": s.deferred,
                                "scheduled": s.scheduled, "open": s.open,
                                "include_deferred": s.include_deferred,
                                "description": s.description} for s in stats.values()]))
        return
    table = Table("pool", "slots", "running", "queued", "deferred", "scheduled", "open",
                  "include deferred", "description")
    for s in stats.values():
        table.add_row(s.name, str(s.slots), str(s.running), str(s.queued), str(s.deferred),
                      str(s.scheduled), str(s.open), "yes" if s.include_deferred else "no",
                      s.description or "")
    console.print(table)


@pools.command("delete")
@click.argument("name")
@click.pass_obj
@friendly
def pools_delete(app: App, name: str) -> None:
    """Delete pool NAME (task instances in it wait until it exists again)."""
    from statewright.db.engine import transaction
    from statewright.db.repositories import pools as pool_repo

    if name == pool_repo.DEFAULT_POOL:
        raise StatewrightError(f"{name} cannot be deleted; change its slots with "
                               f"`statewright pools set {name} N`.")
    app.ensure_schema()
    with transaction(app.engine) as conn:
        in_use = pool_repo.task_instances_in_pool(conn, name)
        if not pool_repo.delete_pool(conn, name):
            raise StatewrightError(f"No pool named {name!r}; see `statewright pools list`.")
    console.print(f"pool {name} deleted")
    if in_use:
        console.print(f"[yellow]{in_use} unfinished task instance(s) use it: they are not "
                      f"queued until the pool exists again.[/]")
