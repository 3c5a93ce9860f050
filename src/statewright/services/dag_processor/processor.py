"""Finds ``*.py`` files in the DAGs folder, imports them, stores serialized DAGs and errors."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine

from statewright.core.clock import Clock, utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import import_errors
from statewright.sdk.loader import load_dag_file

log = logging.getLogger("statewright.dag_processor")


@dataclass
class ProcessorStats:
    files: int = 0
    dags: int = 0
    changed: int = 0
    errors: dict[str, str] = field(default_factory=dict)
    deactivated: list[str] = field(default_factory=list)


class DagProcessor:
    def __init__(self, engine: Engine, folder: Path, *, clock: Clock = utcnow,
                 paused_at_creation: bool = False, interval_seconds: float = 5.0) -> None:
        self.engine = engine
        self.folder = Path(folder)
        self.clock = clock
        self.paused_at_creation = paused_at_creation
        self.interval_seconds = interval_seconds

    def files(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.rglob("*.py") if not p.name.startswith("_"))

    def run_once(self) -> ProcessorStats:
        stats = ProcessorStats()
        now = self.clock()
        seen: set[str] = set()
        for path in self.files():
            stats.files += 1
            result = load_dag_file(path)
            with transaction(self.engine) as conn:
                if result.error:
                    stats.errors[str(path)] = result.error
                    import_errors.record(conn, str(path), result.error, now)
                    continue
                import_errors.clear(conn, [str(path)])
                for dag in result.dags.values():
                    stats.dags += 1
                    seen.add(dag.dag_id)
                    if dag_repo.upsert_dag(conn, dag.serialize(), now=now,
                                           paused_at_creation=self.paused_at_creation):
                        stats.changed += 1
        with transaction(self.engine) as conn:
            stats.deactivated = dag_repo.deactivate_missing(
                conn, folder_prefix=str(self.folder), present=seen)
        return stats

    def run_forever(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.run_once()
            except Exception:
                log.exception("DAG processing failed")
            stop.wait(self.interval_seconds)
