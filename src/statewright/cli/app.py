"""The composition root: settings → engine → services. The CLI and the API build from here."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from statewright.config import Settings, load_settings
from statewright.db.engine import check_connection, make_engine
from statewright.db.schema_version import migrate_embedded, newest_revision, stored_revision


@dataclass
class App:
    settings: Settings = field(default_factory=load_settings)
    database_wait_seconds: float = 0.0
    """How long the first connection waits for an unreachable database (services: see
    ``as_service``; a one-off command fails at once)."""

    def as_service(self) -> App:
        """A long-running service waits for its database at start (it may be restarting)."""
        self.database_wait_seconds = self.settings.database_wait_seconds
        return self

    @cached_property
    def engine(self) -> Engine:
        from statewright.file_modes import secure_files

        secure_files(self.settings)  # home 0700, database and keys 0600 (warns when looser)
        engine = make_engine(self.settings.database_url)
        check_connection(engine, wait_seconds=self.database_wait_seconds)
        migrate_embedded(engine)
        from statewright.services import listeners

        listeners.install(engine)  # plugins' listeners hear this process's state changes
        return engine

    def close(self) -> None:
        """Close the database connections this process opened (when the command ends)."""
        if "engine" in self.__dict__:
            from statewright.services import listeners

            engine = self.__dict__.pop("engine")
            listeners.forget(engine)
            engine.dispose()

    def ensure_schema(self) -> None:
        """Migrate when the schema is behind (the embedded default needs no separate step).
        The check is one query and the migration files' names: Alembic is imported only to
        migrate (about half a second of CPU for every command otherwise)."""
        if stored_revision(self.engine) != newest_revision():
            from statewright.db.migrate import migrate

            migrate(self.engine)

    def example_dags_folder(self) -> Path:
        return Path(__file__).resolve().parent.parent / "example_dags"


def configure_logging(level: str = "INFO") -> None:
    from rich.logging import RichHandler

    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(name)s: %(message)s",
        datefmt="[%X]",
        handlers=[RichHandler(show_path=False, rich_tracebacks=False)],
    )
    logging.getLogger("alembic").setLevel(logging.WARNING)


def start_thread(target: Any, name: str, *args: Any) -> threading.Thread:
    t = threading.Thread(target=target, args=args, name=name, daemon=True)
    t.start()
    return t
