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
