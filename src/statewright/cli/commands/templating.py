"""``statewright tasks render``: a task's template fields rendered, without running the task."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from statewright.cli.output import console, friendly
from statewright.cli.output import parse_conf as _parse_conf
from statewright.core.errors import StatewrightError
from statewright.core.params import validate_run_conf

_RULE = "# " + "-" * 58


def _find_dag(app: Any, dag_id: str) -> Any:
    from statewright.sdk.loader import load_dag_file

    for path in sorted(app.settings.dags_folder.rglob("*.py")):
        result = load_dag_file(path)
        if dag_id in result.dags:
            return result.dags[dag_id]
    raise StatewrightError(
        f"No DAG with id {dag_id!r} in {app.settings.dags_folder}. Run `statewright dags list` "
        "to see the DAGs, and `statewright dags errors` for files that failed to import.")


def _logical_date(text: str | None) -> datetime:
    if not text:
        return datetime.now(UTC)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise StatewrightError(f"--logical-date {text!r} is not a date or time; use e.g. "
                               "2026-01-31 or 2026-01-31T06:00:00+00:00.") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def render_fields(dag: Any, task_id: str, *, logical_date: datetime,
                  conf: dict[str, Any]) -> dict[str, Any]:
    """The task's template fields as a run at ``logical_date`` with ``conf`` would render them
    (no upstream results: an XComArg or ``xcom_pull`` reads None)."""
    from statewright.sdk.context import build_context
    from statewright.sdk.params import conf_overrides_params
    from statewright.sdk.templating import redact_rendered, render_task_fields

    task = dag.get_task(task_id)
    validate_run_conf(dag.params.serialize(), conf, where=f"DAG {dag.dag_id!r}",
                      conf_overrides_params=conf_overrides_params())
    context = build_context(
        dag, task, run_id=f"manual__{logical_date.isoformat()}", logical_date=logical_date,
        data_interval_start=logical_date, data_interval_end=logical_date, conf=conf,
        try_number=1, max_tries=task.retries, xcoms={})
    try:
        rendered = render_task_fields(task, context)
    except Exception as exc:
        raise StatewrightError(str(exc)) from None
    return {name: redact_rendered(value) for name, value in rendered.items()}


def register(cli: click.Group) -> None:
    tasks = cli.commands["tasks"]
    assert isinstance(tasks, click.Group)

    @tasks.command("render")
    @click.argument("dag_id")
    @click.argument("task_id")
    @click.option("--logical-date", help="The run's logical date (default: now), e.g. "
                  "2026-01-31 or 2026-01-31T06:00:00+00:00.")
    @click.option("--conf", "-c", help="JSON object: the run's conf (validated against the "
                  "DAG's params).")
    @click.pass_obj
    @friendly
    def tasks_render(app: Any, dag_id: str, task_id: str, logical_date: str | None,
                     conf: str | None) -> None:
        """Print TASK_ID's template fields rendered as a run would, without running it."""
        dag = _find_dag(app, dag_id)
        rendered = render_fields(dag, task_id, logical_date=_logical_date(logical_date),
                                 conf=_parse_conf(conf))
        for name, value in rendered.items():
            console.print(f"{_RULE}\n# property: {name}\n{_RULE}", highlight=False)
            console.print(value if isinstance(value, str) else repr(value), highlight=False,
                          markup=False)
            console.print()
