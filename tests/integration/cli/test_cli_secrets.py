"""The connections and variables commands, as a user runs them (a real process, SQLite)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from statewright.crypto import generate_key

PASSWORD = "cli-pass-w0rd"


def _run(tmp: Path, *args: str, key: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "STATEWRIGHT_HOME": str(tmp), "STATEWRIGHT_FERNET_KEY": key,
           "COLUMNS": "200"}
    env.pop("STATEWRIGHT_DATABASE_URL", None)
    return subprocess.run([sys.executable, "-m", "statewright.cli.main", *args], env=env,
                          capture_output=True, text=True, timeout=60, cwd=tmp)


def test_connections_and_variables_commands(tmp_path: Path) -> None:
    key = generate_key()
    r = _run(tmp_path, "connections", "add", "wh", "--conn-uri",
             f"postgresql://u:{PASSWORD}@h:5432/db", key=key)
    assert r.returncode == 0 and PASSWORD not in r.stdout, r.stderr
    assert _run(tmp_path, "connections", "add", "wh", "--conn-type", "x", key=key).returncode == 1
    listed = _run(tmp_path, "connections", "list", "-o", "json", key=key)
    assert json.loads(listed.stdout)[0]["host"] == "h" and PASSWORD not in listed.stdout
    exported = _run(tmp_path, "connections", "export", str(tmp_path / "c.env"), key=key)
    assert exported.returncode == 0 and PASSWORD in (tmp_path / "c.env").read_text()
    assert _run(tmp_path, "variables", "set", "cfg", '{"a": 1}', "--json", key=key).returncode == 0
    bad = _run(tmp_path, "variables", "set", "cfg2", "{oops", "--json", key=key)
    assert bad.returncode == 2 and "not valid JSON" in bad.stderr
    assert json.loads(_run(tmp_path, "variables", "get", "cfg", key=key).stdout) == {"a": 1}
    assert _run(tmp_path, "variables", "get", "nope", "-d", "dflt", key=key).stdout == "dflt\n"
    missing = _run(tmp_path, "variables", "get", "nope", key=key)
    assert missing.returncode == 1 and "nope does not exist" in missing.stderr
    (tmp_path / "bad.env").write_text("ok=postgres://h\nbroken\n")
    bad_import = _run(tmp_path, "connections", "import", str(tmp_path / "bad.env"), key=key)
    assert bad_import.returncode == 1 and "line 2" in bad_import.stderr
    assert "ok" not in json.loads(_run(tmp_path, "connections", "list", "-o", "json",
                                       key=key).stdout)[0]["connection_id"]
    wrong = _run(tmp_path, "connections", "get", "wh", key=generate_key())
    assert wrong.returncode == 1 and "connection id 1 (wh)" in wrong.stderr
    new = generate_key()
    rotated = _run(tmp_path, "rotate-fernet-key", key=f"{new},{key}")
    assert rotated.returncode == 0, rotated.stderr
    assert json.loads(_run(tmp_path, "connections", "get", "wh", "-o", "json",
                           key=new).stdout)[0]["has_password"] is True


def test_a_missing_key_with_postgresql_is_a_clear_error(tmp_path: Path,
                                                        postgres_url: str) -> None:
    env = {**os.environ, "STATEWRIGHT_HOME": str(tmp_path),
           "STATEWRIGHT_DATABASE_URL": postgres_url}
    env.pop("STATEWRIGHT_FERNET_KEY", None)
    r = subprocess.run([sys.executable, "-m", "statewright.cli.main", "variables", "set", "k",
                        "v"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "STATEWRIGHT_FERNET_KEY is not set" in r.stderr
    assert "Traceback" not in r.stderr
    bad = subprocess.run([sys.executable, "-m", "statewright.cli.main", "variables", "list"],
                         env={**env, "STATEWRIGHT_FERNET_KEY": "not-a-key"},
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "malformed" in bad.stderr


def test_connections_test(tmp_path: Path) -> None:
    key = generate_key()
    _run(tmp_path, "connections", "add", "lite", "--conn-type", "sqlite", "--conn-host",
         str(tmp_path / "target.db"), key=key)
    _run(tmp_path, "connections", "add", "files", "--conn-uri", "ftp://h", key=key)
    absent = _run(tmp_path, "connections", "test", "lite", key=key)  # opened, never created
    assert absent.returncode == 1 and "never creates one" in absent.stderr
    assert not (tmp_path / "target.db").exists()
    sqlite3.connect(tmp_path / "target.db").close()
    ok = _run(tmp_path, "connections", "test", "lite", key=key)
    assert ok.returncode == 0 and "Connection success!" in ok.stdout, ok.stderr
    unknown = _run(tmp_path, "connections", "test", "files", key=key)
    assert unknown.returncode == 1 and "no test is known" in unknown.stderr
    missing = _run(tmp_path, "connections", "test", "nope", key=key)
    assert missing.returncode == 1 and "not found: 'nope'" in missing.stderr
