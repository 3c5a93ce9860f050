"""CLI commands for flows (``statewright.flows``): list them, run one, start served runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import click


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    from statewright.cli.output import (
        console,
        fail,
        friendly,
        output_option,
        parse_conf,
        print_rows,
    )

    @cli.group("flows")
    def flows() -> None:
        """Flows: Prefect-style @flow functions whose task calls are recorded as they run."""

    @flows.command("list")
    @output_option
    @click.pass_obj
    @friendly
    def flows_list(app: Any, output: str) -> None:
        """The flows that have run or are served, with their schedule."""
        from statewright.db.repositories import flows as flow_repo

        app.ensure_schema()
        with app.engine.connect() as conn:
            rows = flow_repo.list_flows(conn)
        if output == "table" and not rows:
            console.print("no flows yet: run one with `statewright flows run FILE:FUNCTION`")
            return
        print_rows([{"flow": r.dag_id, "fileloc": r.fileloc, "paused": r.is_paused,
                     "schedule": r.schedule_summary} for r in rows], output,
                   ["flow", "schedule", "paused", "fileloc"], labels={"fileloc": "file"})

    @flows.command("logs")
    @click.argument("run_id")
    @click.pass_obj
    @friendly
    def flows_logs(app: Any, run_id: str) -> None:
        """Everything the flow run RUN_ID logged (its start, prints, task runs' lines and
        tracebacks, its final state), in time order, as its log files hold it."""
        from statewright.db.repositories import runs as run_repo
        from statewright.flows.run_logs import run_log_lines
        from statewright.services.worker.log_paths import log_path_for

        with app.engine.connect() as conn:
            found = run_repo.find_by_run_id(conn, run_id)
        if not found:
            fail(f"no run {run_id!r}: `statewright dags runs FLOW` lists a flow's runs.", 1)
        dag_id = found[0].dag_id
        template = log_path_for(app.settings.logs_folder, dag_id, run_id, "{task_id}", 1)
        assert template is not None  # a logs folder is always set from the CLI
        lines = run_log_lines(template.split("task_id={task_id}")[0])
        if not lines:
            fail(f"run {run_id!r} of {dag_id!r} has no log lines on this machine "
                 f"(under {app.settings.logs_folder}).", 1)
        for line in lines:
            click.echo(line)

    @flows.command("resume")
    @click.argument("run_id")
    @click.option("--flow", "flow_name", default=None, help="The flow, when run ids repeat.")
    @click.pass_obj
    @friendly
    def flows_resume(app: Any, run_id: str, flow_name: str | None) -> None:
        """Resume the crashed durable flow run RUN_ID here: the flow runs again on the same
        run, and each task call that completed before the crash returns its recorded result
        instead of running again (``@flow(durable=True)``)."""
        from datetime import UTC, datetime

        from statewright.cli.identity import cli_actor
        from statewright.services.flows.resume import ResumeRefused, resume_and_run

        try:
            code = resume_and_run(app.engine, run_id, actor=cli_actor(),
                                  now=datetime.now(UTC), dag_id=flow_name)
        except ResumeRefused as exc:
            fail(str(exc), 1)
        if code:
            fail(f"the resumed flow run {run_id} did not complete (exit code {code}); "
                 f"`statewright flows logs {run_id}` shows why.", code)

    @flows.command("run")
    @click.argument("entrypoint")
    @click.option("--params", default=None, help="The flow's parameters as a JSON object.")
    @click.pass_obj
    @friendly
    def flows_run(app: Any, entrypoint: str, params: str | None) -> None:
        """Run the flow ENTRYPOINT (path/to/file.py:function) in a process of its own; its
        states are recorded in this database. STATEWRIGHT_PREFECT_COMPAT=true lets the file
        import prefect."""
        parameters = parse_conf(params)
        path = entrypoint.rpartition(":")[0]
        if not path or not os.path.isfile(path):
            fail(f"{entrypoint!r}: write path/to/file.py:function, with a file that exists.", 2)
        app.ensure_schema()
        env = {**os.environ, "STATEWRIGHT_DATABASE_URL": app.settings.database_url,
               "STATEWRIGHT_FLOW_PARAMETERS": json.dumps(parameters)}
        code = subprocess.call([sys.executable, "-m", "statewright.flows.entry", entrypoint],
                               env=env)
        if code:
            fail(f"the flow run of {entrypoint} did not complete (exit code {code}); see "
                 "`statewright flows list` and the run's history.", code)
