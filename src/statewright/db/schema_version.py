"""Whether an embedded database is at the newest schema, read cheaply (no Alembic import):
a process that starts on a database at head pays one query."""

from __future__ import annotations

import functools
from pathlib import Path

from sqlalchemy import Engine, text

_VERSIONS = Path(__file__).parent / "migrations" / "versions"


def migrate_embedded(engine: Engine) -> None:
    """Create or bring up to date an embedded (SQLite) database on its first use, so a flow
    script, ``dag.test()`` or a CLI command on a new home needs no set-up step. Several
    processes may start at once on a new file: the writer lock lets one migrate, and the others
    find the schema at head. A PostgreSQL database is left alone: migrating a shared server is an
    operator's decision (``statewright db migrate``)."""
    if engine.dialect.name == "sqlite" and stored_revision(engine) != newest_revision():
        from statewright.db.migrate import migrate

        migrate(engine)


def stored_revision(engine: Engine) -> str | None:
    """The revision the database is at, read with one query (None: a new database)."""
    with engine.connect() as conn:
        try:
            value = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        except Exception:  # no such table yet
            return None
    return None if value is None else str(value)


@functools.cache
def newest_revision() -> str:
    """The newest revision, from the migration files' names (``0021_…py`` → ``0021``) without
    loading them: a process that starts on a database at head pays one query."""
    names = (p.name for p in _VERSIONS.glob("[0-9]*.py"))
    return max(name.split("_", 1)[0] for name in names)
