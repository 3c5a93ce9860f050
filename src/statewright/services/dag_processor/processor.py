"""The DAG processor: finds DAG files, imports the changed ones, syncs DAGs and import errors.

One pass (``run_once``):

1. lists the ``*.py`` files below the DAGs folder (names starting with ``_`` or ``.`` and
   ``__pycache__`` are skipped) and compares each file's mtime, size and content hash with
   what the database remembers (``dag_file``); only new and changed files are imported;
2. imports those files in child processes, ``parallelism`` at a time, each within ``timeout``
   seconds (``importer``);
3. syncs the results, a few dozen files per transaction (``sync``): DAG rows (serialized
   structure, timetable, next run), the import error of each file (or its removal), DAGs
   whose file disappeared become inactive.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine

from statewright.core.clock import Clock, utcnow
from statewright.db.engine import read_snapshot, transaction
from statewright.db.repositories import dag_files, import_errors
from statewright.db.repositories import dags as dag_repo
from statewright.sdk import plugins
from statewright.sdk.loader import list_dag_files
from statewright.services.dag_processor.importer import ImportOutcome, import_files
from statewright.services.dag_processor.sync import FileInput, FileSync, forget_removed_files
from statewright.services.loop_failures import DEFAULT_CAP_SECONDS, LoopFailures

log = logging.getLogger("statewright.dag_processor")

_SYNC_BATCH = 50


@dataclass
class ProcessorStats:
    files: int = 0
    """DAG files found in the folder."""
    parsed: int = 0
    """Files imported in this pass (new or changed)."""
    dags: int = 0
    """DAGs synced from the files imported in this pass."""
    changed: int = 0
    """DAGs created or changed."""
    errors: dict[str, str] = field(default_factory=dict)
    """Import errors recorded in this pass, by file."""
    deactivated: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True)
class _FileState:
    path: str
    mtime: float
    size: int


class DagProcessor:
    def __init__(
        self,
        engine: Engine,
        folder: Path,
        *,
        clock: Clock = utcnow,
        paused_at_creation: bool = False,
        interval_seconds: float = 5.0,
        timeout: float = 30.0,
        parallelism: int = 2,
    ) -> None:
        self.engine = engine
        self.folder = Path(folder).expanduser().absolute()
        self.clock = clock
        self.paused_at_creation = paused_at_creation
        self.interval_seconds = interval_seconds
        self.timeout = timeout
        self.parallelism = max(1, parallelism)
        self._errors_retried = False
        """Files with import errors are imported again once per process, changed or not: an
        error may come from this process's settings (``STATEWRIGHT_MAX_TIS_PER_RUN``), the
        environment, or a module the file imports, all of which a restart may have fixed."""

    def _record_plugin_errors(self) -> None:
        """Plugins load once per process; a plugin file that raised is an import error named
        by its file (the processor goes on)."""
        if getattr(self, "_plugins_recorded", False):
            return
        self._plugins_recorded = True
        plugins.load_plugins()
        errors = plugins.plugin_errors()
        if errors:
            with transaction(self.engine) as conn:
                for where, text in errors.items():
                    import_errors.record(conn, where, f"plugin failed to load: {text}",
                                         self.clock())

    @property
    def _prefix(self) -> str:
        return str(self.folder) + os.sep

    def files(self) -> list[Path]:
        """The DAG files of the folder, sorted."""
        return list_dag_files(self.folder)

    def run_once(self, *, force: bool = False) -> ProcessorStats:
        """One pass; ``force`` imports every file, changed or not."""
        started = time.monotonic()
        stats = ProcessorStats()
        self._record_plugin_errors()
        found = self._stat_files()
        stats.files = len(found)
        with read_snapshot(self.engine) as conn:
            known = dag_files.under(conn, self._prefix)
            removed = {p for p in known if p not in found}
            removed |= {p for p in dag_repo.active_by_file(conn, self._prefix) if p not in found}
            errored = set(import_errors.filenames_under(conn, self._prefix))
            removed |= {p for p in errored if p not in found}
        retry = errored if not self._errors_retried else set()
        self._errors_retried = True
        to_import: list[_FileState] = []
        hashes: dict[str, str | None] = {}
        touched: list[_FileState] = []
        for path, st in found.items():
            row = known.get(path)
            again = force or path in retry
            if (not again and row is not None and row.content_hash is not None
                    and row.mtime == st.mtime and row.size == st.size):
                continue
            digest = _content_hash(path)
            hashes[path] = digest
            if not again and row is not None and digest is not None \
                    and row.content_hash == digest:
                touched.append(st)
                continue
            to_import.append(st)
        if touched or removed:
            with transaction(self.engine) as conn:
                for st in touched:
                    dag_files.touch(conn, st.path, mtime=st.mtime, size=st.size)
                stats.deactivated += forget_removed_files(conn, sorted(removed))
        outcomes = import_files(
            [st.path for st in to_import], timeout=self.timeout, parallelism=self.parallelism,
            database_url=self.engine.url.render_as_string(hide_password=False),
        ) if to_import else {}
        stats.parsed = len(outcomes)
        self._sync(to_import, outcomes, hashes, set(found), stats)
        stats.seconds = time.monotonic() - started
        if stats.parsed or stats.deactivated:
            log.info("DAG files: %d found, %d imported, %d DAGs synced, %d import errors, "
                     "%d DAGs deactivated (%.2fs)", stats.files, stats.parsed, stats.dags,
                     len(stats.errors), len(stats.deactivated), stats.seconds)
        return stats

    def _stat_files(self) -> dict[str, _FileState]:
        out: dict[str, _FileState] = {}
        for path in self.files():
            try:
                st = path.stat()
            except OSError:
                continue
            out[str(path)] = _FileState(str(path), st.st_mtime, st.st_size)
        return out

    def _sync(self, to_import: list[_FileState], outcomes: dict[str, ImportOutcome],
              hashes: dict[str, str | None], present: set[str],
              stats: ProcessorStats) -> None:
        states = [st for st in to_import if st.path in outcomes]
        for st in [st for st in states if outcomes[st.path].transient]:
            log.warning("%s: %s", st.path, outcomes[st.path].error)
        states = [st for st in states if not outcomes[st.path].transient]
        for start in range(0, len(states), _SYNC_BATCH):
            batch = states[start:start + _SYNC_BATCH]
            with transaction(self.engine) as conn:
                sync = FileSync(conn, now=self.clock(), folder_prefix=self._prefix,
                                present_files=present, paused_at_creation=self.paused_at_creation)
                results = sync.files([
                    FileInput(st.path, outcomes[st.path], st.mtime, st.size,
                              hashes.get(st.path)) for st in batch])
            for path, result in results.items():
                stats.dags += result.dags
                stats.changed += result.changed
                stats.deactivated += result.deactivated
                if result.error:
                    stats.errors[path] = result.error

    def run_forever(self, stop: threading.Event) -> None:
        failures = LoopFailures("DAG processing", log, period=self.interval_seconds,
                                cap=max(DEFAULT_CAP_SECONDS, self.interval_seconds))
        while not stop.is_set():
            try:
                self.run_once()
            except Exception as exc:
                stop.wait(failures.failed(exc))
                continue
            failures.succeeded()
            stop.wait(self.interval_seconds)


def _content_hash(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None
