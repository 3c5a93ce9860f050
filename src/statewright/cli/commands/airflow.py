"""CLI commands for teams coming from Airflow: ``dags check`` and ``pools import``/``export``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape
from rich.table import Table

from statewright.cli.output import console, friendly, output_option, print_rows
from statewright.core.errors import StatewrightError

if TYPE_CHECKING:
    from statewright.cli.app import App
    from statewright.compat.airflow.check import CheckReport


def register(cli: click.Group) -> None:
    """Add this module's commands to the ``dags`` and ``pools`` groups."""
    for group, command in (("dags", dags_check), ("pools", pools_import),
                           ("pools", pools_export)):
        target = cli.commands[group]
        assert isinstance(target, click.Group)
        target.add_command(command)


@click.command("check")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--airflow", is_flag=True,
              help="Load through the Airflow compatibility layer (as STATEWRIGHT_AIRFLOW_COMPAT).")
@output_option
@friendly
def dags_check(path: Path, airflow: bool, output: str) -> None:
    """Whether each DAG file under PATH loads, its DAGs and task counts, the Airflow names it
    uses that statewright lacks, and the features it relies on. Needs no database."""
    from statewright.compat import airflow as compat
    from statewright.compat.airflow.check import check_path

    report = check_path(path, airflow=airflow or compat.enabled())
    if output == "json":
        click.echo(json.dumps(report.as_dict(), indent=1))
    elif output == "yaml":
        print_rows(report.as_dict()["files"], output, [])
    elif output == "plain":
        print_rows([{"file": f.path, "loads": f.loads, "dags": ",".join(f.dags),
                     "lacks": ",".join(f.missing), "features": ",".join(f.features),
                     "airflow2": "; ".join(_construct(c) for c in f.airflow2)}
                    for f in report.files], output,
                   ["file", "loads", "dags", "lacks", "features", "airflow2"])
    else:
        _print_check(report, path)
    if report.loading < len(report.files):
        sys.exit(1)


def _construct(c: dict[str, Any]) -> str:
    return f"line {c['line']}: {c['construct']} → {c['becomes']}"


def _print_airflow2(report: CheckReport, shown: Callable[[str], str]) -> None:
    """The Airflow 2 constructs of each file and what each becomes (one table)."""
    rows = [(f.path, c) for f in report.files for c in f.airflow2]
    if not rows:
        return
    table = Table("file", "line", "Airflow 2", "becomes", title="Airflow 2 constructs")
    for column in table.columns:
        column.overflow = "fold"
    for path, c in rows:
        table.add_row(shown(path), str(c["line"]), escape(c["construct"]), escape(c["becomes"]))
    console.print(table)


def _print_check(report: CheckReport, root: Path) -> None:
    def shown(path: str) -> str:
        return escape(os.path.relpath(path, root) if root.is_dir() else path)

    table = Table("file", "loads", "DAGs (tasks)", "statewright lacks", "features")
    for column in table.columns:
        column.overflow = "fold"
    for f in report.files:
        dags = ", ".join(f"{d} ({n})" for d, n in f.dags.items())
        loads = "[green]yes[/]" if f.loads else "[red]no[/]"
        table.add_row(shown(f.path), loads, escape(dags), escape("\n".join(f.missing)),
                      escape(", ".join(f.features)))
    console.print(table)
    _print_airflow2(report, shown)
    for f in report.files:
        if f.error and not f.missing:
            last = f.error.strip().splitlines()[-1] if f.error.strip() else f.error
            console.print(f"[red]{shown(f.path)}[/]: {escape(last)}", soft_wrap=True)
        for note in f.notes:
            console.print(f"[yellow]{shown(f.path)}[/]: {escape(note)}", soft_wrap=True)
    console.print(report.summary)


@click.command("import")
@click.argument("file", type=click.Path(path_type=Path))
@click.pass_obj
@friendly
def pools_import(app: App, file: Path) -> None:
    """Create or update the pools of FILE, a file `airflow pools export` wrote (all or none)."""
    from statewright.compat.airflow.pools import parse_pool_export
    from statewright.db.engine import transaction
    from statewright.db.repositories import pools as pool_repo

    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise StatewrightError(f"cannot read {file}: {exc}") from None
    specs = parse_pool_export(text, str(file))
    app.ensure_schema()
    with transaction(app.engine) as conn:
        created = pool_repo.import_pools(conn, [
            (p.name, p.slots, p.description, p.include_deferred) for p in specs])
    console.print(f"{len(specs)} pool(s) imported from {file}: {created} created, "
                  f"{len(specs) - created} updated", soft_wrap=True)  # a path is never cut


@click.command("export")
@click.argument("file", type=click.Path(path_type=Path))
@click.pass_obj
@friendly
def pools_export(app: App, file: Path) -> None:
    """Write every pool to FILE in the format of `airflow pools export` (`-` for stdout)."""
    from statewright.compat.airflow.pools import PoolSpec, format_pool_export
    from statewright.db.engine import transaction
    from statewright.db.repositories import pools as pool_repo

    app.ensure_schema()
    with transaction(app.engine) as conn:
        pool_repo.ensure_default(conn, app.settings.default_pool_slots)
        rows = pool_repo.list_all(conn)
    text = format_pool_export(PoolSpec(r.name, int(r.slots), r.description,
                                       bool(r.include_deferred)) for r in rows)
    if str(file) == "-":
        click.echo(text)
        return
    file.write_text(text + "\n", encoding="utf-8")
    console.print(f"{len(rows)} pool(s) exported to {file}", soft_wrap=True)
