"""Shared fixtures: a migrated database on SQLite and on PostgreSQL.

Persistence and service tests take ``engine``, which runs each test on both databases. The
PostgreSQL server is 127.0.0.1:5432 (``STATEWRIGHT_TEST_POSTGRES_URL`` overrides); when it is
unreachable the PostgreSQL variants skip, except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from functools import cache

import pytest
from sqlalchemy import Engine, create_engine, text

import statewright.config
from statewright.db.engine import make_engine
from statewright.db.migrate import migrate
from statewright.db.tables import metadata

# The suite's DAGs run when triggered: new DAGs start unpaused here (tests of the default turn
# it back on), in this process and in the servers and CLIs the tests start.
statewright.config.DAGS_ARE_PAUSED_AT_CREATION = False
os.environ["STATEWRIGHT_DAGS_ARE_PAUSED_AT_CREATION"] = "false"

PG_ADMIN_URL = os.environ.get(
    "STATEWRIGHT_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


# Only the tables a test wrote to are emptied. On PostgreSQL those whose file is not empty (rows,
# or rows deleted) are truncated: each gets a new, empty file, so every table is as fresh as a
# new one (rows a test inserts come back in the order it inserted them, as some tests' reads
# without ORDER BY expect), and every table's id sequence starts again at 1. On SQLite the
# tables that hold rows are deleted from, children first (rowids start again at 1 by
# themselves). A TRUNCATE of all 43 tables took 130-200 ms on PostgreSQL, twice per test of
# about 900; this takes 70-130 ms after a test and 4-7 ms before the next (SQLite: 0.1 ms where
# 43 DELETEs took 1.2).
_PG_TABLES_WRITTEN = text(
    "SELECT c.relname FROM pg_class AS c WHERE c.relkind = 'r' AND pg_table_is_visible(c.oid) "
    "AND c.relname = ANY(:names) AND pg_relation_size(c.oid) > 0")
_PG_RESTART_IDS = text(
    "SELECT setval(d.objid::regclass, 1, false) FROM pg_depend AS d "
    "JOIN pg_class AS c ON c.oid = d.objid WHERE c.relkind = 'S' AND d.deptype IN ('a', 'i')")
_SQLITE_TABLES_WITH_ROWS = text(" UNION ALL ".join(
    f'SELECT {i} WHERE EXISTS (SELECT 1 FROM "{t.name}")'
    for i, t in enumerate(metadata.sorted_tables)))


def _truncate(engine: Engine) -> None:
    tables = metadata.sorted_tables
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            written = conn.execute(_PG_TABLES_WRITTEN,
                                   {"names": [t.name for t in tables]}).scalars().all()
            if written:
                names = ", ".join(f'"{name}"' for name in sorted(written))
                conn.execute(text(f"TRUNCATE {names} CASCADE"))
            conn.execute(_PG_RESTART_IDS)
        else:
            full = {row[0] for row in conn.execute(_SQLITE_TABLES_WITH_ROWS)}
            for i in sorted(full, reverse=True):
                conn.execute(tables[i].delete())


@pytest.fixture(scope="session")
def sqlite_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    path = tmp_path_factory.mktemp("db") / "statewright.db"
    engine = make_engine(f"sqlite:///{path}")
    migrate(engine)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    name = f"statewright_test_{uuid.uuid4().hex[:8]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:
        admin.dispose()
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL is required under CI=true and is unreachable: {exc}")
        pytest.skip(f"PostgreSQL unreachable: {exc}")
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    yield url
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session")
def postgres_engine(postgres_url: str) -> Iterator[Engine]:
    engine = make_engine(postgres_url)
    migrate(engine)
    yield engine
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    eng: Engine = request.getfixturevalue(f"{request.param}_engine")
    _truncate(eng)
    yield eng
    _truncate(eng)


@pytest.fixture
def pg_engine(postgres_engine: Engine) -> Iterator[Engine]:
    """PostgreSQL only, emptied: for what only a shared server does (several schedulers)."""
    _truncate(postgres_engine)
    yield postgres_engine
    _truncate(postgres_engine)


@cache
def _password_hash(password: str) -> str:
    from statewright.services.auth.passwords import hash_password

    return hash_password(password)


def add_user(engine: Engine, username: str, role: str) -> dict[str, str]:
    """Create ``username`` (password ``password-<username>``) unless it exists, with a new API
    token; returns the ``Authorization`` header of that token."""
    from statewright.core.clock import utcnow
    from statewright.db.engine import transaction
    from statewright.db.repositories import users as user_repo
    from statewright.services.auth.accounts import create_token

    with transaction(engine) as conn:
        if user_repo.get_user(conn, username) is None:
            user_repo.insert_user(conn, username, _password_hash(f"password-{username}"), role,
                                  utcnow())
    secret, _ = create_token(engine, username, kind="api", name="tests", now=utcnow(),
                             lifetime=None)
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture
def auth_headers() -> Callable[..., dict[str, str]]:
    """``auth_headers(engine, username="admin", role="admin")``: a user and a bearer header."""
    def make(engine: Engine, username: str = "admin", role: str = "admin") -> dict[str, str]:
        return add_user(engine, username, role)

    return make


@pytest.fixture
def cli_run(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., object]]:
    """``cli_run(env, *args, input=None)``: run the CLI in this process like a separate command,
    closing the database connections it opened when it ends."""
    from click.testing import CliRunner

    from statewright.cli.app import App
    from statewright.cli.main import cli

    apps: list[App] = []

    class _Tracked(App):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            apps.append(self)

    monkeypatch.setattr("statewright.cli.main.App", _Tracked)

    def run(env: dict[str, str], *args: str, input: str | None = None) -> object:
        try:
            return CliRunner().invoke(cli, list(args), env=env, input=input,
                                      catch_exceptions=False)
        finally:
            for app in apps:
                if "engine" in app.__dict__:
                    app.engine.dispose()
            apps.clear()

    yield run
