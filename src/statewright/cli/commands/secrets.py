"""CLI commands: ``connections``, ``variables`` and ``rotate-fernet-key`` (Airflow's flags and
file formats)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from statewright.cli.output import (
    confirm,
    fail,
    friendly,
    output_option,
    print_rows,
    yes_option,
)


def _admin(app: Any) -> Any:
    from statewright.services.secrets.admin import SecretsAdmin
    from statewright.services.worker.deferral import install_cipher, load_cipher

    app.ensure_schema()
    cipher = load_cipher(app.settings)
    install_cipher(cipher)
    return SecretsAdmin(app.engine, lambda: cipher)


def _write(text: str, file: str) -> None:
    if file == "-":
        sys.stdout.write(text)
    else:
        Path(file).write_text(text, encoding="utf-8")


def register(cli: click.Group) -> None:
    _register_connections(cli)
    _register_variables(cli)

    @cli.command("rotate-fernet-key")
    @click.pass_obj
    @friendly
    def rotate_fernet_key(app: Any) -> None:
        """Re-encrypt every stored connection secret and variable with the first key of
        STATEWRIGHT_FERNET_KEY (set NEW_KEY,OLD_KEY first; drop OLD_KEY afterwards)."""
        counts = _admin(app).rotate_fernet_key()
        click.echo(f"Re-encrypted {counts['connection']} connection(s) and "
                   f"{counts['variable']} variable(s) with the first key.")


def _connection_from_options(conn_id: str, o: dict[str, Any]) -> Any:
    from statewright.sdk.connection import Connection

    if o["conn_uri"] and o["conn_json"]:
        fail("give --conn-uri or --conn-json, not both", 2)
    fields = {k: o[f"conn_{k}"] for k in ("type", "host", "login", "password", "schema",
                                          "port", "extra")}
    if o["conn_uri"] or o["conn_json"]:
        if any(v is not None for v in fields.values()):
            fail("--conn-uri and --conn-json cannot be combined with the other --conn-* "
                 "options", 2)
        if o["conn_uri"]:
            conn = Connection(conn_id=conn_id, uri=o["conn_uri"])
        else:
            conn = Connection.from_json(o["conn_json"], conn_id=conn_id)
        if o["conn_description"] is not None:
            conn.description = o["conn_description"]
        return conn
    if not fields["type"]:
        fail("give --conn-uri, --conn-json, or at least --conn-type", 2)
    return Connection(conn_id=conn_id, conn_type=fields["type"], host=fields["host"],
                      login=fields["login"], password=fields["password"],
                      schema=fields["schema"], port=fields["port"], extra=fields["extra"],
                      description=o["conn_description"])


def _register_connections(cli: click.Group) -> None:
    @cli.group()
    def connections() -> None:
        """Connections: add, get, list, delete, import, export, test."""

    @connections.command("add")
    @click.argument("conn_id")
    @click.option("--conn-uri", help="The connection as a URI.")
    @click.option("--conn-json", help="The connection as a JSON object.")
    @click.option("--conn-type")
    @click.option("--conn-host")
    @click.option("--conn-login")
    @click.option("--conn-password")
    @click.option("--conn-schema")
    @click.option("--conn-port")
    @click.option("--conn-extra", help="A JSON object.")
    @click.option("--conn-description")
    @click.pass_obj
    @friendly
    def add(app: Any, conn_id: str, **options: Any) -> None:
        """Add a connection (an existing conn_id is an error)."""
        conn = _connection_from_options(conn_id, options)
        try:
            _admin(app).add_connection(conn)
        except KeyError:
            fail(f"A connection with `conn_id`={conn_id} already exists.")
        click.echo(f"Successfully added `conn_id`={conn_id} : {_safe_uri(conn)}")

    @connections.command("get")
    @click.argument("conn_id")
    @output_option
    @click.pass_obj
    @friendly
    def get(app: Any, conn_id: str, output: str) -> None:
        """Show one connection (never its password)."""
        from statewright.services.secrets.admin import public_connection

        conn = _admin(app).get_connection(conn_id)
        if conn is None:
            fail(f"Connection not found: {conn_id!r}")
        print_rows([public_connection(conn)], output, _CONN_COLUMNS)

    @connections.command("list")
    @click.option("--conn-id", help="Only this connection.")
    @output_option
    @click.pass_obj
    @friendly
    def list_(app: Any, conn_id: str | None, output: str) -> None:
        """List the connections (never their passwords)."""
        from statewright.services.secrets.admin import public_connection

        rows = [public_connection(c) for c in _admin(app).list_connections(conn_id=conn_id)]
        print_rows(rows, output, _CONN_COLUMNS)

    @connections.command("delete")
    @click.argument("conn_id")
    @yes_option
    @click.pass_obj
    @friendly
    def delete(app: Any, conn_id: str, yes: bool) -> None:
        """Delete a connection."""
        confirm(f"Delete connection {conn_id!r}?", yes=yes)
        if not _admin(app).delete_connection(conn_id):
            fail(f"Did not find a connection with `conn_id`={conn_id}")
        click.echo(f"Successfully deleted connection with `conn_id`={conn_id}")

    @connections.command("import")
    @click.argument("file", type=click.Path(dir_okay=False))
    @click.option("--overwrite", is_flag=True, help="Replace connections that exist.")
    @click.pass_obj
    @friendly
    def import_(app: Any, file: str, overwrite: bool) -> None:
        """Import the connections of a file Airflow's `connections export` wrote (.json,
        .yaml, .yml, .env); a malformed file imports nothing."""
        report = _admin(app).import_connections(file, overwrite=overwrite)
        for conn_id in report.stored:
            click.echo(f"Imported connection {conn_id}")
        for conn_id in report.skipped:
            click.echo(f"Could not import connection {conn_id}: connection already exists.")

    @connections.command("export")
    @click.argument("file")
    @click.option("--file-format", "--format", "file_format",
                  type=click.Choice(["json", "yaml", "env"]), default=None,
                  help="Default: from the file's extension (json for '-').")
    @click.option("--serialization-format", type=click.Choice(["json", "uri"]), default="uri",
                  show_default=True, help="How .env files write each connection.")
    @click.pass_obj
    @friendly
    def export(app: Any, file: str, file_format: str | None,
               serialization_format: str) -> None:
        """Export every connection, passwords included, in Airflow's format."""
        fmt = file_format or _format_of(file)
        _write(_admin(app).export_connections(fmt, serialization_format), file)
        if file != "-":
            click.echo(f"Connections successfully exported to {file}.", err=True)

    @connections.command("test")
    @click.argument("conn_id")
    @click.pass_obj
    @friendly
    def test(app: Any, conn_id: str) -> None:
        """Test a connection: SQL types run SELECT 1, http(s) sends a request."""
        from statewright.services.secrets.admin import test_connection

        conn = _admin(app).get_connection(conn_id)
        if conn is None:
            fail(f"Connection not found: {conn_id!r}")
        ok, message = test_connection(conn)
        if not ok:
            fail(f"Connection {conn_id!r} failed: {message}")
        click.echo(f"Connection success! {message}")


_CONN_COLUMNS = ["connection_id", "conn_type", "description", "host", "port", "schema",
                 "login", "extra"]


def _format_of(file: str) -> str:
    ext = Path(file).suffix.lstrip(".").lower()
    if file == "-":
        return "json"
    if ext in ("json", "env"):
        return ext
    if ext in ("yaml", "yml"):
        return "yaml"
    fail(f"Unsupported file format {ext!r}: use a .json, .yaml, .yml or .env file, or "
         "--file-format", 2)


def _safe_uri(conn: Any) -> str:
    from statewright.sdk.masking import MASK

    uri: str = conn.get_uri()
    return uri.replace(f":{_quoted(conn.password)}@", f":{MASK}@") if conn.password else uri


def _quoted(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


def _register_variables(cli: click.Group) -> None:
    @cli.group()
    def variables() -> None:
        """Variables: set, get, list, delete, import, export."""

    @variables.command("set")
    @click.argument("key")
    @click.argument("value")
    @click.option("--description", help="What the variable is for.")
    @click.option("--json", "-j", "as_json", is_flag=True,
                  help="VALUE is JSON: checked and stored as JSON.")
    @click.pass_obj
    @friendly
    def set_(app: Any, key: str, value: str, description: str | None, as_json: bool) -> None:
        """Create or replace a variable."""
        if as_json:
            try:
                value = json.dumps(json.loads(value), indent=2)
            except json.JSONDecodeError as exc:
                fail(f"The value of {key!r} is not valid JSON ({exc}); nothing was stored", 2)
        _admin(app).set_variable(key, value, description)
        click.echo(f"Variable {key} created")

    @variables.command("get")
    @click.argument("key")
    @click.option("--default", "-d", help="Printed when the variable does not exist.")
    @click.option("--json", "-j", "as_json", is_flag=True, help="Print the value as JSON.")
    @click.pass_obj
    @friendly
    def get(app: Any, key: str, default: str | None, as_json: bool) -> None:
        """Print a variable's value."""
        record = _admin(app).get_variable(key)
        if record is None:
            if default is None:
                fail(f"Variable {key} does not exist")
            click.echo(default)
            return
        if as_json:
            try:
                click.echo(json.dumps(json.loads(record.val or "")))
            except json.JSONDecodeError as exc:
                fail(f"Variable {key!r} is not valid JSON ({exc})")
            return
        click.echo(record.val)

    @variables.command("list")
    @output_option
    @click.option("--show-values", is_flag=True, help="Show values (sensitive ones masked).")
    @click.pass_obj
    @friendly
    def list_(app: Any, output: str, show_values: bool) -> None:
        """List the variables."""
        from statewright.services.secrets.admin import public_variable

        rows = [public_variable(v) for v in _admin(app).list_variables()]
        columns = ["key", "value", "description"] if show_values else ["key", "description"]
        print_rows([{c: r[c] for c in columns} for r in rows], output, columns)

    @variables.command("delete")
    @click.argument("key")
    @yes_option
    @click.pass_obj
    @friendly
    def delete(app: Any, key: str, yes: bool) -> None:
        """Delete a variable."""
        confirm(f"Delete variable {key!r}?", yes=yes)
        if not _admin(app).delete_variable(key):
            fail(f"Variable {key} does not exist")
        click.echo(f"Variable {key} deleted")

    @variables.command("import")
    @click.argument("file", type=click.Path(dir_okay=False))
    @click.option("--action-on-existing-key", "-a", default="overwrite", show_default=True,
                  type=click.Choice(["overwrite", "fail", "skip"]))
    @click.pass_obj
    @friendly
    def import_(app: Any, file: str, action_on_existing_key: str) -> None:
        """Import variables from a .json, .yaml, .yml or .env file (Airflow's format); a
        malformed file imports nothing."""
        try:
            report = _admin(app).import_variables(
                file, action_on_existing_key=action_on_existing_key)
        except KeyError as exc:
            fail(str(exc.args[0]))
        total = len(report.stored) + len(report.skipped)
        click.echo(f"{len(report.stored)} of {total} variables successfully updated.")
        if report.skipped:
            click.echo(f"The variables with these keys: {sorted(report.skipped)} were skipped "
                       "because they already exists")

    @variables.command("export")
    @click.argument("file")
    @click.pass_obj
    @friendly
    def export(app: Any, file: str) -> None:
        """Export every variable to a JSON file (Airflow's format)."""
        _write(_admin(app).export_variables(), file)
        if file != "-":
            click.echo(f"Variables successfully exported to {file}.", err=True)
