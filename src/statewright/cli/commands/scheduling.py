"""CLI commands: scheduling — pausing DAGs, import errors, Late runs, backfills and pools."""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from statewright.cli.output import (
    confirm,
    console,
    fail,
    friendly,
    output_option,
    parse_conf,
    print_rows,
    print_table,
    yes_option,
)
from statewright.core.errors import StatewrightError

if TYPE_CHECKING:
    from statewright.cli.app import App
    from statewright.services.dag_processor import DagProcessor
    from statewright.services.scheduler.steps import Step


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    dags = cli.commands["dags"]
    assert isinstance(dags, click.Group)
    for command in (dags_pause, dags_unpause, dags_events, dags_errors, dags_late):
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
    """Pause or unpause, with an audit row naming who (``cli:$USER``) in the same transaction,
    as the API's pause writes one."""
    from statewright.cli.identity import cli_actor
    from statewright.core.clock import utcnow
    from statewright.db.engine import transaction
    from statewright.db.repositories import audit
    from statewright.db.repositories import dags as dag_repo

    _sync(app)
    action = "pause" if paused else "unpause"
    with transaction(app.engine) as conn:
        if not dag_repo.set_paused(conn, dag_id, paused):
            raise StatewrightError(f"No DAG with id {dag_id!r}; see `statewright dags list`.")
        audit.record(conn, at=utcnow(), username=cli_actor().value, action=action,
                     method="CLI", path=f"statewright dags {action}", outcome="success",
                     status_code=0, dag_id=dag_id, target=dag_id)
    console.print(f"{dag_id} {'paused' if paused else 'unpaused'}")


@click.command("events")
@click.argument("dag_id")
@click.option("--event", default=None, help="Only this event, e.g. paused.")
@click.option("--limit", default=50, show_default=True)
@output_option
@click.pass_obj
@friendly
def dags_events(app: App, dag_id: str, event: str | None, limit: int, output: str) -> None:
    """DAG_ID's audit log, newest first: who did what, when and why (a pause by the scheduler
    after max_consecutive_failed_dag_runs failed runs names them)."""
    from statewright.db.repositories import audit

    app.ensure_schema()
    with app.engine.connect() as conn:
        rows, _ = audit.page(conn, limit=limit, offset=0, dag_id=dag_id, action=event)
    print_rows([{"when": _t(r.at), "owner": r.username or "", "event": r.action,
                 "outcome": r.outcome, "detail": r.detail or ""} for r in rows], output,
               ["when", "owner", "event", "outcome", "detail"])


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
        # The whole path on a line of its own, as text: a rule's title would cut a long path
        # short and read "[" in a file name as markup.
        console.rule(style="red")
        console.print(r.filename, style="bold red", highlight=False, markup=False,
                      soft_wrap=True)
        console.print(r.stacktrace, highlight=False, markup=False)
    sys.exit(1)


@click.command("late")
@output_option
@click.pass_obj
@friendly
def dags_late(app: App, output: str) -> None:
    """Runs queued, and task instances scheduled or queued, past their Late threshold."""
    from statewright.db.repositories import scheduling as sched_repo

    app.ensure_schema()
    with app.engine.connect() as conn:
        runs = sched_repo.late_runs(conn)
        tis = sched_repo.late_task_instances(conn)
    late = {"runs": [{"dag_id": r.dag_id, "run_id": r.run_id, "state": r.state,
                      "queued_at": _t(r.queued_at)} for r in runs],
            "task_instances": [{"dag_id": t.dag_id, "run_id": t.run_id, "task_id": t.task_id,
                                "state": t.state, "pool": t.pool,
                                "since": _t(t.queued_at if t.state == "queued"
                                            else t.scheduled_at)} for t in tis]}
    if output == "json":
        click.echo(json.dumps(late))
    elif output == "yaml":
        import yaml

        click.echo(yaml.safe_dump(late, sort_keys=False), nl=False)
    elif output == "plain":  # one table: a late run has no task_id nor pool
        print_rows([*({**r, "since": r["queued_at"]} for r in late["runs"]),
                    *late["task_instances"]], output,
                   ["dag_id", "run_id", "task_id", "state", "since", "pool"])
    elif not runs and not tis:
        console.print("nothing is late")
    else:
        if runs:
            print_table(late["runs"], ["dag_id", "run_id", "state", "queued_at"],
                        title="Late runs", labels={"queued_at": "queued since"})
        if tis:
            print_table(late["task_instances"], ["dag_id", "run_id", "task_id", "state",
                                                 "since", "pool"], title="Late task instances")


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
@click.option("--from-date", "--start-date", "from_date",
              help="First logical date of the range (inclusive), e.g. 2026-01-01.")
@click.option("--to-date", "--end-date", "to_date",
              help="Last logical date of the range (inclusive), e.g. 2026-01-31.")
@click.option("--partition-from", help="First partition key of the range (inclusive), for a "
                                       "DAG on a CronPartitionTimetable.")
@click.option("--partition-to", help="Last partition key of the range (inclusive).")
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
def backfill(app: App, dag_id: str, from_date: str | None, to_date: str | None,
             reprocess_behavior: str, max_active_runs: int, run_backwards: bool,
             dag_run_conf: str | None, dry_run: bool, wait: bool,
             partition_from: str | None = None, partition_to: str | None = None) -> None:
    """Create runs of DAG_ID for every scheduled time from --from-date to --to-date.

    The scheduler creates the runs in order (type backfill, run id backfill__<logical date>)
    and keeps at most --max-active-runs of them queued or running at once.
    """
    from statewright.core.clock import utcnow
    from statewright.services.backfill import create_backfill

    conf = parse_conf(dag_run_conf)
    _sync(app)
    start, end = _backfill_range(app, dag_id, from_date, to_date, partition_from, partition_to)
    plan = create_backfill(app.engine, dag_id, start, end, reprocess_behavior=reprocess_behavior,
                           max_active_runs=max_active_runs, run_backwards=run_backwards,
                           dag_run_conf=conf, dry_run=dry_run, now=utcnow())
    _print_plan(console, plan, dry_run)
    if dry_run:
        return
    if plan.paused and wait and plan.to_run:
        fail(f"DAG {dag_id} is paused, so backfill {plan.backfill_id} cannot make progress: "
             "not waiting. Its runs start once you run "
             f"`statewright dags unpause {dag_id}`; then follow them with `statewright dags "
             f"runs {dag_id}`.", 1)
    if plan.paused:
        console.print(f"[yellow]DAG {dag_id} is paused: its runs start once you run "
                      f"`statewright dags unpause {dag_id}`.[/]")
    if wait and plan.backfill_id is not None:
        _follow(app, plan.backfill_id, len(plan.to_run))


def _backfill_range(app: App, dag_id: str, from_date: str | None, to_date: str | None,
                    partition_from: str | None,
                    partition_to: str | None) -> tuple[datetime, datetime]:
    """The logical dates of the range given by dates or by partition keys (not both)."""
    by_dates = from_date is not None or to_date is not None
    by_keys = partition_from is not None or partition_to is not None
    if by_dates == by_keys:
        raise StatewrightError("give the range either by --from-date and --to-date or by "
                               "--partition-from and --partition-to. Nothing was created.")
    if by_dates:
        if from_date is None or to_date is None:
            raise StatewrightError("give both --from-date and --to-date. Nothing was created.")
        return _parse_date(from_date, "--from-date"), _parse_date(to_date, "--to-date")
    if partition_from is None or partition_to is None:
        raise StatewrightError("give both --partition-from and --partition-to. Nothing was "
                               "created.")
    from statewright.services.backfill import partition_range

    with app.engine.connect() as conn:
        return partition_range(conn, dag_id, partition_from, partition_to)


def _print_plan(console: Any, plan: Any, dry_run: bool) -> None:
    labels = {"create": "create", "reprocess": "run again"}
    print_table([{"logical date": d.info.logical_date.isoformat(),
                  "action": labels.get(d.action, f"skip: {d.reason}"),
                  "existing run": d.existing_run_id} for d in plan.dates],
                ["logical date", "action", "existing run"],
                title=f"Backfill of {plan.dag_id}" + (" (dry run)" if dry_run else ""))
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
    from statewright.services.pools import set_pool

    app.ensure_schema()
    created = set_pool(app.engine, name, slots, description=description,
                       include_deferred=include_deferred)
    console.print(f"pool {name} {'created' if created else 'updated'}: {slots} slots")


@pools.command("list")
@output_option
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
    listed = [{"pool": s.name, "slots": s.slots, "running": s.running, "queued": s.queued,
               "deferred": s.deferred, "scheduled": s.scheduled, "open": s.open,
               "include_deferred": s.include_deferred, "description": s.description}
              for s in stats.values()]
    print_rows(listed, output, ["pool", "slots", "running", "queued", "deferred", "scheduled",
                                "open", "include_deferred", "description"],
               labels={"include_deferred": "include deferred"})


@pools.command("delete")
@click.argument("name")
@yes_option
@click.pass_obj
@friendly
def pools_delete(app: App, name: str, yes: bool) -> None:
    """Delete pool NAME (task instances in it wait until it exists again)."""
    from statewright.db.repositories import pools as pool_repo
    from statewright.services.pools import delete_pool

    app.ensure_schema()
    with app.engine.connect() as conn:
        exists = pool_repo.get(conn, name) is not None
    if exists and name != pool_repo.DEFAULT_POOL:  # delete_pool refuses these, unasked
        confirm(f"Delete pool {name!r}?", yes=yes)
    deleted = delete_pool(app.engine, name)
    console.print(f"pool {name} deleted")
    if deleted.in_use:
        console.print(f"[yellow]{deleted.in_use} unfinished task instance(s) use it: they are "
                      f"not queued until the pool exists again.[/]")
