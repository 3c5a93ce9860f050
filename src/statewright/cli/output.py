"""What the CLI prints: the consoles, one-paragraph errors, listings in every ``-o`` format,
confirmations, and parsing shared by commands."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.markup import escape

from statewright.core.errors import StatewrightError

console = Console()
err = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``message`` as one paragraph on stderr and exit with ``code``."""
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    sys.exit(code)


def friendly(fn: F) -> F:
    """Turn statewright's errors into one clear paragraph and a non-zero exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except StatewrightError as exc:
            fail(str(exc))
        except json.JSONDecodeError as exc:
            fail(f"--conf is not valid JSON: {exc}. Example: --conf '{{\"key\": 1}}'", 2)

    return wrapper  # type: ignore[return-value]


def parse_conf(conf: str | None) -> dict[str, Any]:
    """``--conf``: a JSON object within the input limits (``STATEWRIGHT_MAX_INPUT_*``)."""
    if not conf:
        return {}
    from statewright.config import input_limits
    from statewright.core.limits import check_json_text, check_value

    limits = input_limits()
    check_json_text(conf.encode(), limits, what="--conf")  # before the parser meets its depth
    value = json.loads(conf)
    check_value(value, limits, what="--conf")
    if not isinstance(value, dict):
        raise StatewrightError(f"--conf must be a JSON object, got {type(value).__name__}: {conf}")
    return value


def parse_logical_date(value: str | None) -> datetime | None:
    """``--logical-date``: ISO 8601, UTC when it names no zone; a bad value is a usage error."""
    if value is None:
        return None
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO 8601 date or time (e.g. 2026-01-01 "
                                 "or 2026-01-01T06:00:00+02:00).") from None
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


# -- listings: one ``-o/--output`` flag for every command that lists --------------------------

OUTPUT_FORMATS = ("table", "json", "yaml", "plain")


def output_option(fn: F) -> F:
    """``-o/--output table|json|yaml|plain``: the one flag every listing command takes."""
    return click.option("--output", "-o", type=click.Choice(OUTPUT_FORMATS), default="table",
                        show_default=True,
                        help="table for people; json or yaml for programs; plain: "
                             "tab-separated with a header line, nothing cut.")(fn)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def print_rows(rows: Sequence[Mapping[str, Any]], output: str, columns: Sequence[str], *,
               title: str | None = None, labels: Mapping[str, str] | None = None) -> None:
    """Print ``rows`` (dicts) as ``output``: a table shows ``columns`` (headed by ``labels``);
    json and yaml carry every key of each row; plain is tab-separated with a header line.
    No value is ever cut: a table on a terminal folds a long cell, and a table that is not on a
    terminal (a pipe, a file) is as wide as its widest row."""
    if output == "json":
        click.echo(json.dumps([dict(r) for r in rows], indent=2, default=_cell))
    elif output == "yaml":
        import yaml

        plain = json.loads(json.dumps([dict(r) for r in rows], default=_cell))
        click.echo(yaml.safe_dump(plain, sort_keys=False), nl=False)
    elif output == "plain":
        click.echo("\t".join((labels or {}).get(c, c) for c in columns))
        for row in rows:
            click.echo("\t".join(_cell(row.get(c)).replace("\t", " ").replace("\n", " ")
                                 for c in columns))
    else:
        print_table(rows, columns, title=title, labels=labels)


def print_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], *,
                title: str | None = None, labels: Mapping[str, str] | None = None) -> None:
    from rich.table import Table

    names = labels or {}
    table = Table(*(names.get(c, c) for c in columns), title=title)
    for column in table.columns:
        column.overflow = "fold"  # never "…": a run id copied from the screen must be whole
    for row in rows:
        table.add_row(*(escape(_cell(row.get(c))) for c in columns))
    out = console if console.is_terminal else Console(width=100_000, highlight=False)
    out.print(table)


def confirm(question: str, *, yes: bool) -> None:
    """Ask ``question`` unless ``-y/--yes`` was given; "no" (or no answer) exits with code 1,
    nothing changed."""
    if yes:
        return
    try:
        agreed = click.confirm(question)
    except click.Abort:
        agreed = False
    if not agreed:
        fail("cancelled; nothing was changed (-y/--yes skips this question)", 1)


def yes_option(fn: F) -> F:
    return click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")(fn)
