"""File modes (issue 36, part 6): ``$STATEWRIGHT_HOME`` 0700, the SQLite database with its WAL
and SHM, keys and logs 0600 (0750/0640 with STATEWRIGHT_FILES_GROUP_READABLE): new files through
the umask of the ``statewright`` command, looser existing ones tightened at start with a
warning."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from statewright.config import load_settings


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEWRIGHT_")}
    env.update(STATEWRIGHT_HOME=str(home), STATEWRIGHT_DAGS_FOLDER=str(home.parent / "dags"),
               **extra)
    return env


def _loose_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True)
    db = home / "statewright.db"
    # Closed here, not left to the garbage collector: SQLite deletes the WAL and SHM files when
    # the last connection closes, which a collection at any later moment of the test would do.
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (x)")
    for name in ("statewright.db-wal", "statewright.db-shm", "secret_key", "fernet.key"):
        (home / name).touch()
    for path in home.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    home.chmod(0o755)
    return home


def test_looser_files_are_tightened_at_start_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from statewright.file_modes import secure_files

    home = _loose_home(tmp_path)
    settings = load_settings(_env(home))
    warnings = secure_files(settings)
    assert _mode(home) == 0o700 and _mode(home / "logs") == 0o700
    for name in ("statewright.db", "statewright.db-wal", "statewright.db-shm", "secret_key",
                 "fernet.key"):
        assert _mode(home / name) == 0o600, name
    assert len(warnings) == 7 and "was mode 0644, looser than 0600" in " ".join(warnings)
    assert "file permissions" in caplog.text
    assert secure_files(settings) == []  # nothing left to say


def test_the_group_setting_keeps_files_group_readable(tmp_path: Path) -> None:
    from statewright.file_modes import secure_files

    home = _loose_home(tmp_path)
    secure_files(load_settings(_env(home, STATEWRIGHT_FILES_GROUP_READABLE="true")))
    assert _mode(home) == 0o750 and _mode(home / "statewright.db") == 0o640


@pytest.mark.parametrize(("group", "home_mode", "file_mode"),
                         [("false", 0o700, 0o600), ("true", 0o750, 0o640)])
def test_the_command_makes_new_files_private_whatever_the_caller_s_umask(
        tmp_path: Path, group: str, home_mode: int, file_mode: int) -> None:
    home = tmp_path / "home"
    env = _env(home, STATEWRIGHT_FILES_GROUP_READABLE=group)
    code = ("import os, sys; os.umask(0o022); sys.argv = ['statewright', 'users', 'create', "
            "'ada', '--role', 'admin', '--password', 'password-ada']; "
            "from statewright.cli.main import main; main()")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _mode(home) == home_mode
    made = [p for p in home.iterdir() if p.is_file()]
    assert any(p.name == "statewright.db" for p in made)
    assert _mode(home / "statewright.db") == file_mode
    looser = {p.name: oct(_mode(p)) for p in made if _mode(p) & ~file_mode}
    assert looser == {}
