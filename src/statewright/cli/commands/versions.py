"""CLI commands: ``statewright dags versions`` and ``statewright db clean``."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click


def register(cli: click.Group) -> None:
    """Add this module's commands to the ``dags`` and ``db`` groups."""
    from statewright.cli.output import console, fail, friendly

    dags = cli.commands["dags"]
    db = cli.commands["db"]
    assert isinstance(dags, click.Group) and isinstance(db, click.Group)

    @dags.command("versions")
    @click.argument("dag_id")
    @click.option("--output", "-o", type=click.Choice(["table", "json"]), default="table")
    @click.pass_obj
    @friendly
    def dags_versions(app: Any, dag_id: str, output: str) -> None:
        """The versions of DAG_ID, oldest first: one per change of its structure or code."""
        from rich.table import Table

        from statewright.api import version_reads
        from statewright.api.errors import NotFound

        app.ensure_schema()
        try:
            with app.engine.connect() as conn:
                versions = version_reads.list_versions(conn, dag_id).dag_versions
        except NotFound as exc:
            fail(str(exc.detail))
        if output == "json":
            click.echo(json.dumps([v.model_dump(mode="json") for v in versions]))
            return
        table = Table("version", "created at", "structure", "code", "file")
        for v in versions:
            table.add_row(v.version_name, v.created_at.isoformat(timespec="seconds"),
                          v.structure_hash[:12], v.code_hash[:12], v.fileloc or "")
        console.print(table)

    @db.command("clean")
    @click.option("--clean-before-timestamp", "before", required=True,
                  help="Delete finished runs due before this time (ISO 8601; UTC if no offset).")
    @click.option("--dag-id", "dag_ids", multiple=True, help="Only these DAGs (repeatable).")
    @click.option("--dry-run", is_flag=True, help="Count what would go; delete nothing.")
    @click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
    @click.pass_obj
    @friendly
    def db_clean(app: Any, before: str, dag_ids: tuple[str, ...], dry_run: bool,
                 yes: bool) -> None:
        """Delete finished runs older than a time, with their task instances, tries, history
        and results, and the DAG versions that only those runs used."""
        from statewright.core.states import RUN_TERMINAL
        from statewright.db.engine import transaction
        from statewright.db.repositories import db_clean as cleaning

        moment = _parse_moment(before, fail)
        if not dry_run and not yes:
            click.confirm(f"Delete the finished runs due before {moment.isoformat()}?",
                          abort=True)
        app.ensure_schema()
        with transaction(app.engine) as conn:
            done = cleaning.clean(conn, before=moment,
                                  terminal_states={s.value for s in RUN_TERMINAL},
                                  dag_ids=set(dag_ids) or None, dry_run=dry_run)
        verb = "would delete" if dry_run else "deleted"
        click.echo(f"{verb} {done.runs} runs and {done.versions} unused DAG versions")


def _parse_moment(text: str, fail: Any) -> datetime:
    from datetime import UTC

    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        fail(f"--clean-before-timestamp {text!r} is not an ISO 8601 time "
             "(for example 2026-01-31 or 2026-01-31T12:00:00+00:00).")
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
