"""Run the Alembic migrations (``statewright db migrate``); idempotent."""

from __future__ import annotations

import functools
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, text

from statewright.db import tables
from statewright.db.engine import write_connection
from statewright.db.schema_version import migrate_embedded, newest_revision, stored_revision

__all__ = ["current_revision", "head_revision", "migrate", "migrate_embedded", "newest_revision",
           "reset", "stored_revision"]

_SCRIPT_LOCATION = str(Path(__file__).parent / "migrations")


def _config(connection: object) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", _SCRIPT_LOCATION)
    cfg.attributes["connection"] = connection
    cfg.attributes["target_metadata"] = tables.metadata
    return cfg


# Held for the migration's transaction on PostgreSQL: processes that start at once on a new
# database (several workers, schedulers, triggerers) migrate one after the other, and the later
# ones find the schema at head. (SQLite's writer lock already serializes them.)
_MIGRATION_LOCK_KEY = 0x5357_4D49  # "SWMI"


def migrate(engine: Engine) -> str | None:
    """Bring the schema to the newest revision; returns the revision now in force."""
    with write_connection(engine) as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY})
        command.upgrade(_config(conn), "head")
    return current_revision(engine)


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


@functools.cache
def head_revision() -> str | None:
    cfg = Config()
    cfg.set_main_option("script_location", _SCRIPT_LOCATION)
    return ScriptDirectory.from_config(cfg).get_current_head()


def reset(engine: Engine) -> None:
    """Drop every table (the data is gone) and migrate again."""
    with write_connection(engine) as conn:
        command.downgrade(_config(conn), "base")
    migrate(engine)


def autogenerate(engine: Engine, message: str) -> None:
    """Write a new revision from the difference between the tables and the database."""
    with write_connection(engine) as conn:
        command.revision(_config(conn), message=message, autogenerate=True)
