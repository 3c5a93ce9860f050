"""``statewright dags check``: which files of a folder load, with which DAGs, and what is missing.

Runs without a database or a server: each file is imported in this process by the DAG loader
(with the Airflow compatibility layer on when asked) and its source is scanned for the Airflow
names it uses.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from statewright.compat.airflow.hook import activated
from statewright.compat.airflow.scan import SourceScan, scan_source
from statewright.core.errors import StatewrightError
from statewright.sdk.loader import list_dag_files, load_dag_file


@dataclass
class FileReport:
    """The verdict on one file."""

    path: str
    loads: bool
    error: str | None = None
    dags: dict[str, int] = field(default_factory=dict)
    """dag_id → number of tasks."""
    missing: list[str] = field(default_factory=list)
    """Airflow names (``module.Name``) and modules (``module (module)``) statewright lacks."""
    features: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    airflow2: list[dict[str, Any]] = field(default_factory=list)
    """Each Airflow 2 construct: ``line``, ``construct`` as written, what it ``becomes``."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class CheckReport:
    files: list[FileReport]

    @property
    def loading(self) -> int:
        return sum(1 for f in self.files if f.loads)

    @property
    def summary(self) -> str:
        return f"{self.loading} of {len(self.files)} files load"

    def as_dict(self) -> dict[str, Any]:
        return {"files": [f.as_dict() for f in self.files],
                "summary": {"loading": self.loading, "total": len(self.files)}}


def check_path(path: str | Path, *, airflow: bool) -> CheckReport:
    """Check a file, or every DAG file below a folder (as the DAG processor finds them)."""
    root = Path(path)
    if root.is_dir():
        files = list_dag_files(root)
    elif root.is_file():
        files = [root]
    else:
        raise StatewrightError(f"{str(root)!r} is neither a file nor a folder.")
    return CheckReport([check_file(f, airflow=airflow) for f in files])


def check_file(path: Path, *, airflow: bool) -> FileReport:
    report = FileReport(path=str(path), loads=False)
    try:
        scan = scan_source(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as exc:
        report.error = f"{type(exc).__name__}: {exc}"
        return report
    with activated() if airflow else nullcontext():
        report.missing = scan.missing() if airflow else []
        result = load_dag_file(path)
    report.loads = result.error is None
    report.error = result.error
    report.dags = {dag_id: len(dag.tasks) for dag_id, dag in sorted(result.dags.items())}
    report.features = sorted(scan.features)
    report.airflow2 = [c.as_dict() for c in scan.airflow2]
    report.notes = list(_notes(scan, airflow))
    return report


def _notes(scan: SourceScan, airflow: bool) -> Iterator[str]:
    if scan.uses_airflow and scan.imports_statewright:
        yield ("imports both airflow and statewright: through the compatibility layer both "
               "name the same objects; prefer one of them")
    if scan.uses_airflow and not airflow:
        yield "imports airflow: check it with --airflow (STATEWRIGHT_AIRFLOW_COMPAT=true)"
