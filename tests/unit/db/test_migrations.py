"""The migrations build exactly the tables the code declares, and migrate is idempotent."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine

from statewright.db.migrate import current_revision, head_revision, migrate
from statewright.db.tables import metadata


def test_schema_matches_the_tables(engine: Engine) -> None:
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": False})
        diff = compare_metadata(ctx, metadata)
    assert diff == []


def test_migrate_twice_is_a_no_op(engine: Engine) -> None:
    assert migrate(engine) == head_revision()
    assert migrate(engine) == head_revision() == current_revision(engine)


def _migrate_in_process(url: str) -> str | None:
    from statewright.db.engine import make_engine

    engine = make_engine(url)
    try:
        return migrate(engine)
    finally:
        engine.dispose()


def test_processes_starting_at_once_on_a_new_postgres_database_migrate_one_by_one(
        postgres_url: str) -> None:
    """Workers, schedulers and triggerers started together on an empty PostgreSQL database each
    run the migrations at start: they take turns, and every one ends at head."""
    import multiprocessing as mp
    import uuid

    from sqlalchemy import create_engine, text

    name = f"statewright_mig_{uuid.uuid4().hex[:8]}"
    admin = create_engine(postgres_url.rsplit("/", 1)[0] + "/postgres",
                          isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = postgres_url.rsplit("/", 1)[0] + f"/{name}"
    try:
        with mp.get_context("spawn").Pool(4) as pool:
            revisions = pool.map(_migrate_in_process, [url] * 4)
        assert revisions == [head_revision()] * 4
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
