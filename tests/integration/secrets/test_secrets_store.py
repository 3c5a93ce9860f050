"""Connections and variables in the database (SQLite and PostgreSQL): encrypted at rest, key
rotation, a wrong key reported by row, Airflow's import and export files."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.fernet import MultiFernet
from sqlalchemy import Engine, select

from statewright.crypto import generate_key, load_fernet
from statewright.db.repositories.secret_values import UndecryptableRows
from statewright.db.tables_secrets import connection, variable
from statewright.sdk.connection import Connection
from statewright.services.secrets.admin import SecretsAdmin
from statewright.services.secrets.files import FileParseError

PASSWORD = "Pa55-word-never-plain"
SECRET_VALUE = "top-secret-variable-value"


def _admin(engine: Engine, cipher: MultiFernet) -> SecretsAdmin:
    return SecretsAdmin(engine, lambda: cipher)


def _fill(admin: SecretsAdmin) -> None:
    admin.add_connection(Connection(conn_id="wh", uri=f"postgresql://u:{PASSWORD}@h:5432/db"
                                                      "?sslmode=require"))
    admin.set_variable("api_secret", SECRET_VALUE, "a secret")
    admin.set_variable("plain", "42")


def test_values_are_stored_encrypted_and_read_back(engine: Engine,
                                                   cipher: MultiFernet) -> None:
    admin = _admin(engine, cipher)
    _fill(admin)
    with engine.connect() as conn:
        stored = conn.execute(select(connection.c.password, connection.c.extra)).one()
        val = conn.execute(select(variable.c.val).where(variable.c.key == "api_secret")).one()
    assert PASSWORD not in stored.password and "sslmode" not in stored.extra
    assert SECRET_VALUE not in val.val
    got = admin.get_connection("wh")
    assert got is not None and got.password == PASSWORD
    assert got.extra_dejson == {"sslmode": "require"}
    record = admin.get_variable("api_secret")
    assert record is not None and record.val == SECRET_VALUE


def test_strings_over_the_sqlite_file_or_a_pg_dump_show_no_secret(
        engine: Engine, cipher: MultiFernet, tmp_path: Path) -> None:
    _fill(_admin(engine, cipher))
    if engine.dialect.name == "sqlite":
        engine.dispose()  # the WAL is checkpointed into the file
        path = engine.url.database
        assert path
        dump = subprocess.run(["strings", path], capture_output=True, text=True,
                              check=True).stdout
        for suffix in ("-wal",):
            if Path(path + suffix).exists():
                dump += subprocess.run(["strings", path + suffix], capture_output=True,
                                       text=True, check=True).stdout
    else:
        if shutil.which("pg_dump") is None:
            pytest.skip("pg_dump is not installed")
        url = engine.url
        dump = subprocess.run(["pg_dump", "-h", url.host or "127.0.0.1", "-p",
                               str(url.port or 5432), "-U", url.username or "postgres",
                               url.database or ""], capture_output=True, text=True,
                              check=True).stdout
    assert "api_secret" in dump  # the dump holds the rows...
    assert PASSWORD not in dump and SECRET_VALUE not in dump  # ...but not the secrets


def test_rotation_keeps_every_value_readable(engine: Engine, cipher: MultiFernet,
                                             fernet_key: str) -> None:
    _fill(_admin(engine, cipher))
    new_key = generate_key()
    both = load_fernet(f"{new_key},{fernet_key}")
    counts = _admin(engine, both).rotate_fernet_key()
    assert counts == {"connection": 1, "variable": 2}
    only_new = _admin(engine, load_fernet(new_key))
    got = only_new.get_connection("wh")
    assert got is not None and got.password == PASSWORD
    assert {v.key: v.val for v in only_new.list_variables()} == {
        "api_secret": SECRET_VALUE, "plain": "42"}
    with pytest.raises(UndecryptableRows):  # the old key alone no longer reads them
        _admin(engine, load_fernet(fernet_key)).get_connection("wh")


def test_a_wrong_key_reports_rows_by_id_and_overwrites_nothing(
        engine: Engine, cipher: MultiFernet) -> None:
    _fill(_admin(engine, cipher))
    with engine.connect() as conn:
        before = conn.execute(select(variable.c.id, variable.c.val)).all()
    wrong = _admin(engine, load_fernet(generate_key()))
    with pytest.raises(UndecryptableRows) as exc:
        wrong.rotate_fernet_key()
    message = str(exc.value)
    assert re.search(r"connection id \d+ \(wh\)", message) and "(api_secret)" in message
    assert "Nothing was changed" in message
    with pytest.raises(UndecryptableRows, match=r"variable id \d+ \(plain\)"):
        wrong.list_variables()
    with engine.connect() as conn:
        assert conn.execute(select(variable.c.id, variable.c.val)).all() == before


def test_import_of_airflow_export_files(engine: Engine, cipher: MultiFernet,
                                        tmp_path: Path) -> None:
    admin = _admin(engine, cipher)
    (tmp_path / "c.json").write_text(json.dumps({
        "pg": {"conn_type": "postgres", "description": None, "login": "u",
               "password": "pw-json", "host": "h", "port": 5432, "schema": "db",
               "extra": '{"sslmode": "require"}'},
        "api": "http://user:pw@api.example.org:8080/v1"}))
    (tmp_path / "c.yaml").write_text("my:\n  conn_type: mysql\n  host: m\n  port: 3306\n"
                                     "  extra:\n    charset: utf8mb4\n")
    (tmp_path / "c.env").write_text("# comment\n\nlite=sqlite://%2Ftmp%2Fx.db\n"
                                    'js={"conn_type": "http", "host": "j"}\n')
    for name in ("c.json", "c.yaml", "c.env"):
        admin.import_connections(str(tmp_path / name))
    got = {c.conn_id: c for c in admin.list_connections()}
    assert sorted(got) == ["api", "js", "lite", "my", "pg"]
    assert got["pg"].password == "pw-json" and got["my"].extra_dejson == {"charset": "utf8mb4"}
    assert got["api"].schema == "v1" and got["lite"].host == "/tmp/x.db"
    again = admin.import_connections(str(tmp_path / "c.json"))
    assert again.skipped == ["pg", "api"] and again.stored == []


def test_export_then_import_round_trips(engine: Engine, cipher: MultiFernet,
                                        tmp_path: Path) -> None:
    admin = _admin(engine, cipher)
    _fill(admin)
    admin.set_variable("cfg", '{"a": [1, 2]}')
    exported = {fmt: admin.export_connections(fmt) for fmt in ("json", "yaml", "env")}
    exported["env"] = admin.export_connections("env", "json")
    variables = admin.export_variables()
    before = [c.to_dict() for c in admin.list_connections()]
    vars_before = [(v.key, v.val, v.description) for v in admin.list_variables()]
    for fmt, text in exported.items():
        path = tmp_path / f"c.{fmt}"
        path.write_text(text)
        admin.delete_connection("wh")
        admin.import_connections(str(path))
        assert [c.to_dict() for c in admin.list_connections()] == before, fmt
    (tmp_path / "v.json").write_text(variables)
    for v in admin.list_variables():
        admin.delete_variable(v.key)
    admin.import_variables(str(tmp_path / "v.json"))
    after = {v.key: (v.val, v.description) for v in admin.list_variables()}
    assert after["api_secret"] == (SECRET_VALUE, "a secret")
    assert json.loads(after["cfg"][0]) == {"a": [1, 2]}
    assert len(after) == len(vars_before)


@pytest.mark.parametrize("name, text, expected", [
    ("bad.env", "ok=postgres://h\nno equals sign\n=novalue\nempty=\nok=mysql://h\n",
     ["line 2", "line 3", "line 4", "line 5"]),
    ("bad.json", '{"a": "postgres://h",\n "b": oops}', ["line 2"]),
    ("bad.yaml", "a: postgres://h\nb: [unclosed\n", ["line 3"]),
    ("bad2.json", '{"a": "postgres://h", "b": "notauri", "c": {"conn_type": "x", '
                  '"extra": "{bad"}}', ["'b'", "'c'", "extra is not valid JSON"]),
    ("bad.txt", "a=b", ["Unsupported file format"]),
])
def test_a_malformed_file_imports_nothing(engine: Engine, cipher: MultiFernet, tmp_path: Path,
                                          name: str, text: str, expected: list[str]) -> None:
    admin = _admin(engine, cipher)
    (tmp_path / name).write_text(text)
    with pytest.raises(FileParseError) as exc:
        admin.import_connections(str(tmp_path / name))
    for word in expected:
        assert word in str(exc.value)
    assert "nothing was imported" in str(exc.value)
    assert admin.list_connections() == []


def test_variable_import_actions(engine: Engine, cipher: MultiFernet, tmp_path: Path) -> None:
    admin = _admin(engine, cipher)
    admin.set_variable("a", "old")
    (tmp_path / "v.yaml").write_text("a: new\nb:\n  value: {x: 1}\n  description: d\n")
    with pytest.raises(KeyError, match="already exist"):
        admin.import_variables(str(tmp_path / "v.yaml"), action_on_existing_key="fail")
    assert [v.key for v in admin.list_variables()] == ["a"]
    report = admin.import_variables(str(tmp_path / "v.yaml"), action_on_existing_key="skip")
    assert report.skipped == ["a"] and report.stored == ["b"]
    b = admin.get_variable("b")
    assert b is not None and json.loads(b.val or "") == {"x": 1} and b.description == "d"
    admin.import_variables(str(tmp_path / "v.yaml"))
    a = admin.get_variable("a")
    assert a is not None and a.val == "new"
    (tmp_path / "bad.env").write_text("c=1\nc=2\n")
    with pytest.raises(FileParseError, match="line 2"):
        admin.import_variables(str(tmp_path / "bad.env"))
