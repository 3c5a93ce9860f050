"""A new home needs no set-up: the first use of its SQLite file creates and migrates it.

Prefect 3 runs a flow script on a new machine with nothing prepared; so does statewright, for
every entry point (a flow script, the CLI), also when several start at once on the new file.
A PostgreSQL database is not migrated behind the operator's back.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from statewright.db.engine import make_engine
from statewright.db.migrate import head_revision

FLOW = """\
from statewright.flows import flow, task

@task
def one() -> int:
    return 1

@flow
def totals() -> int:
    return one() + 1

if __name__ == "__main__":
    print("result", totals())
"""

STATEWRIGHT = str(Path(sys.executable).with_name("statewright"))


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEWRIGHT_")}
    return {**env, "STATEWRIGHT_HOME": str(home)}


def _revision(db: Path) -> str:
    engine = create_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as conn:
            return str(conn.execute(text("SELECT version_num FROM alembic_version")).scalar())
    finally:
        engine.dispose()


def test_two_flow_scripts_and_a_cli_command_start_at_once_on_a_new_home(tmp_path: Path) -> None:
    script = tmp_path / "flow.py"
    script.write_text(FLOW)
    home = tmp_path / "home"
    assert not home.exists()
    procs = [subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, env=_env(home),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    procs.append(subprocess.Popen([STATEWRIGHT, "flows", "list"], cwd=tmp_path, env=_env(home),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outputs = [p.communicate(timeout=120) for p in procs]
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    assert all("result 2" in out for out, _ in outputs[:2]), outputs
    assert _revision(home / "statewright.db") == head_revision()
    listed = subprocess.run([STATEWRIGHT, "dags", "runs", "totals", "-o", "plain"], cwd=tmp_path,
                            env=_env(home), capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count("success") == 2, listed.stdout


@pytest.fixture
def empty_postgres_url() -> Iterator[str]:
    """A new, empty PostgreSQL database (no schema)."""
    from tests.conftest import PG_ADMIN_URL

    name = f"statewright_empty_{uuid.uuid4().hex[:8]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:
        admin.dispose()
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL is required under CI=true and is unreachable: {exc}")
        pytest.skip(f"PostgreSQL unreachable: {exc}")
    yield PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.mark.postgres
def test_an_unmigrated_postgresql_database_is_not_migrated_by_a_flow(
        tmp_path: Path, empty_postgres_url: str) -> None:
    script = tmp_path / "flow.py"
    script.write_text(FLOW)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120,
                          env={**_env(tmp_path / "home"),
                               "STATEWRIGHT_DATABASE_URL": empty_postgres_url})
    assert done.returncode != 0
    assert "statewright db migrate" in done.stdout + done.stderr
    engine = make_engine(empty_postgres_url)
    try:
        with engine.connect() as conn:
            tables = conn.execute(text(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema='public'"
            )).scalar()
    finally:
        engine.dispose()
    assert tables == 0


def test_dag_test_runs_on_a_new_home(tmp_path: Path) -> None:
    dag_file = tmp_path / "hello.py"
    dag_file.write_text(
        "from datetime import datetime\n"
        "from statewright.sdk import DAG, task\n"
        "with DAG('hello', schedule=None, start_date=datetime(2024, 1, 1)) as dag:\n"
        "    @task\n"
        "    def one() -> int:\n"
        "        return 1\n"
        "    one()\n"
        "if __name__ == '__main__':\n"
        "    print(dag.test().states)\n")
    home = tmp_path / "home"
    done = subprocess.run([sys.executable, str(dag_file)], cwd=tmp_path, env=_env(home),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "{'one': 'success'}" in done.stdout
