"""CLI commands: controls over runs — clear and mark task instances; mark, cancel, pause and
resume DAG runs. Every change goes through the state door with the actor ``cli:$USER``."""

from __future__ import annotations

from typing import Any

import click

from statewright.cli.identity import cli_actor
from statewright.cli.output import confirm, console, friendly, yes_option
from statewright.core.states import RUN, TI


class _RunsGroup(click.Group):
    """``dags runs``: with no subcommand (or a DAG id first) it lists recent runs."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("-h", "--help")):
            args = ["list", *args]
        return super().parse_args(ctx, args)


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    tasks = cli.commands["tasks"]
    dags = cli.commands["dags"]
    assert isinstance(tasks, click.Group) and isinstance(dags, click.Group)
    for command in (tasks_clear, _mark_task_command(TI.SUCCESS), _mark_task_command(TI.FAILED)):
        tasks.add_command(command)
    runs = dags.commands.get("runs")
    if not isinstance(runs, click.Group):
        group = _RunsGroup("runs", help="DAG runs: list (the default), mark, cancel, pause, "
                                        "resume. `dags runs [DAG_ID] [-o json]` lists recent "
                                        "runs.")
        if runs is not None:
            group.add_command(runs, name="list")
        dags.add_command(group)
        runs = group
    for command in (_mark_run_command(RUN.SUCCESS), _mark_run_command(RUN.FAILED), runs_cancel,
                    runs_pause, runs_resume):
        runs.add_command(command)


# -- helpers ------------------------------------------------------------------------------------


def _show(plan: Any, *, applied: bool, asking: bool = False) -> None:
    """Print ``plan``; ``asking``: a preview a confirmation question follows (no "dry run")."""
    for line in plan.describe():
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    if plan.empty or asking:
        return
    n = len(plan.changes)
    kills = len(plan.kills)
    if applied:
        tail = f"; {kills} running tr{'y is' if kills == 1 else 'ies are'} being killed" \
            if kills else ""
        console.print(f"done: {n} task instance(s) changed{tail}", highlight=False)
    else:
        console.print(f"dry run: nothing was changed ({n} task instance(s) would change)",
                      highlight=False)


def _planned(plan: Any, question: str, *, dry_run: bool, yes: bool) -> bool:
    """Show a dry-run ``plan``; return whether to apply it: never for a dry run or an empty
    plan, at once with ``-y``, else when the user confirms ``question``."""
    if dry_run or plan.empty:
        _show(plan, applied=False)
        return False
    if not yes:
        _show(plan, applied=False, asking=True)
        confirm(question, yes=False)
    return True


def _what(plan: Any) -> str:
    n = len(plan.changes)
    run = " and the run" if plan.run_change is not None else ""
    return f"these {n} task instance(s){run}" if n else "the run"


def _engine(app: Any) -> Any:
    app.ensure_schema()
    return app.engine


def _now() -> Any:
    from statewright.core.clock import utcnow

    return utcnow()


_dag_id_option = click.option("--dag-id", help="The DAG, when the run id is not unique.")
_dry_run_option = click.option("--dry-run", is_flag=True,
                               help="Show exactly what would change, and change nothing.")


def _map_index_option(f: Any) -> Any:
    return click.option(
        "--map-index", "map_indexes", type=click.IntRange(min=-1), multiple=True,
        help="Only this map index of a mapped task (repeat for several).")(f)


# -- tasks clear --------------------------------------------------------------------------------


@click.command("clear")
@click.argument("run_id")
@_dag_id_option
@click.option("-t", "--task-regex", "task_regexes", multiple=True,
              help="Clear the tasks whose id this regular expression finds (repeatable; "
                   "default: every task).")
@click.option("-d", "--downstream", is_flag=True, help="Also clear every task downstream.")
@click.option("-u", "--upstream", is_flag=True, help="Also clear every task upstream.")
@click.option("-f", "--only-failed", is_flag=True,
              help="Only failed and upstream_failed task instances.")
@_map_index_option
@_dry_run_option
@yes_option
@click.option("--clear-state", is_flag=True,
              help="Also delete the cleared tasks' task state (kept otherwise).")
@click.pass_obj
@friendly
def tasks_clear(app: Any, run_id: str, dag_id: str | None, task_regexes: tuple[str, ...],
                downstream: bool, upstream: bool, only_failed: bool, map_indexes: tuple[int, ...],
                dry_run: bool, yes: bool, clear_state: bool = False) -> None:
    """Run task instances of RUN_ID again: finished ones go restarting, then back to their
    dependencies; running ones are killed first; a finished run is queued again."""
    from statewright.services.controls import clear_task_instances

    engine = _engine(app)
    kwargs: dict[str, Any] = dict(dag_id=dag_id, task_regexes=task_regexes, upstream=upstream,
                                  downstream=downstream, only_failed=only_failed,
                                  map_indexes=map_indexes or None, actor=cli_actor())
    plan = clear_task_instances(engine, run_id, dry_run=True, now=_now(), **kwargs)
    if not _planned(plan, f"Clear {_what(plan)}?", dry_run=dry_run, yes=yes):
        return
    done = clear_task_instances(engine, run_id, now=_now(), clear_state=clear_state, **kwargs)
    _show(done, applied=True)


# -- tasks mark-success / mark-failed -----------------------------------------------------------


def _mark_task_command(to: TI) -> click.Command:
    @click.command(f"mark-{to.value}")
    @click.argument("run_id")
    @click.argument("task_id")
    @_dag_id_option
    @click.option("-d", "--downstream", is_flag=True, help="Also mark every task downstream.")
    @click.option("-u", "--upstream", is_flag=True, help="Also mark every task upstream.")
    @_map_index_option
    @_dry_run_option
    @yes_option
    @click.pass_obj
    @friendly
    def command(app: Any, run_id: str, task_id: str, dag_id: str | None, downstream: bool,
                upstream: bool, map_indexes: tuple[int, ...], dry_run: bool, yes: bool) -> None:
        from statewright.services.controls import mark_task_instances

        def mark(dry: bool) -> Any:
            return mark_task_instances(_engine(app), run_id, task_id, to, dag_id=dag_id,
                                       upstream=upstream, downstream=downstream, dry_run=dry,
                                       map_indexes=map_indexes or None, now=_now(),
                                       actor=cli_actor())

        plan = mark(True)
        if _planned(plan, f"Mark {_what(plan)} {to.value}?", dry_run=dry_run, yes=yes):
            _show(mark(False), applied=True)

    command.help = (f"Mark TASK_ID of RUN_ID {to.value} (a running try is killed). A finished "
                    "run's state follows its leaves again.")
    return command


# -- dags runs ----------------------------------------------------------------------------------


def _mark_run_command(to: RUN) -> click.Command:
    @click.command(f"mark-{to.value}")
    @click.argument("run_id")
    @_dag_id_option
    @_dry_run_option
    @yes_option
    @click.pass_obj
    @friendly
    def command(app: Any, run_id: str, dag_id: str | None, dry_run: bool, yes: bool) -> None:
        from statewright.services.controls import mark_run

        def mark(dry: bool) -> Any:
            return mark_run(_engine(app), run_id, to, dag_id=dag_id, dry_run=dry, now=_now(),
                            actor=cli_actor())

        plan = mark(True)
        if _planned(plan, f"Mark run {run_id} {to.value}?", dry_run=dry_run, yes=yes):
            _show(mark(False), applied=True)

    command.help = {
        RUN.SUCCESS: "Mark RUN_ID success: its unfinished, failed and upstream_failed task "
                     "instances become success (running tries are killed).",
        RUN.FAILED: "Mark RUN_ID failed: running, deferred and rescheduled task instances "
                    "become failed (running tries are killed), other unfinished ones skipped.",
    }[to]
    return command


@click.command("cancel")
@click.argument("run_id")
@_dag_id_option
@_dry_run_option
@yes_option
@click.pass_obj
@friendly
def runs_cancel(app: Any, run_id: str, dag_id: str | None, dry_run: bool, yes: bool) -> None:
    """Cancel RUN_ID: running tries are killed and end Cancelled, unfinished task instances
    end Cancelled; no failure hook fires."""
    from statewright.services.controls import cancel_run

    def cancel(dry: bool) -> Any:
        return cancel_run(_engine(app), run_id, dag_id=dag_id, dry_run=dry, now=_now(),
                          actor=cli_actor())

    plan = cancel(True)
    if _planned(plan, f"Cancel run {run_id}?", dry_run=dry_run, yes=yes):
        _show(cancel(False), applied=True)


@click.command("pause")
@click.argument("run_id")
@_dag_id_option
@_dry_run_option
@click.pass_obj
@friendly
def runs_pause(app: Any, run_id: str, dag_id: str | None, dry_run: bool) -> None:
    """Pause RUN_ID: no new task of it starts; running tries finish."""
    from statewright.services.controls import pause_run

    plan = pause_run(_engine(app), run_id, dag_id=dag_id, dry_run=dry_run, now=_now(),
                     actor=cli_actor())
    _show(plan, applied=not dry_run)


@click.command("resume")
@click.argument("run_id")
@_dag_id_option
@_dry_run_option
@click.option("--input", "input_json", default=None, metavar="JSON",
              help="The input a paused flow run waits for (pause_flow_run(wait_for_input=...)).")
@click.pass_obj
@friendly
def runs_resume(app: Any, run_id: str, dag_id: str | None, dry_run: bool,
                input_json: str | None) -> None:
    """Resume a paused RUN_ID where it stood (a suspended flow run runs again)."""
    import json

    from statewright.services.controls import resume_run
    from statewright.services.flows.run_input import NO_INPUT

    try:
        run_input = json.loads(input_json) if input_json is not None else NO_INPUT
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--input") from None
    plan = resume_run(_engine(app), run_id, dag_id=dag_id, dry_run=dry_run, now=_now(),
                      actor=cli_actor(), run_input=run_input)
    _show(plan, applied=not dry_run)


__all__ = ["register"]
