"""Where a task instance's try writes its log (light: the flow recorder imports it at start)."""

from __future__ import annotations

from pathlib import Path


def log_path_for(logs_folder: Path | None, dag_id: str, run_id: str, task_id: str,
                 try_number: int, map_index: int = -1) -> str | None:
    if logs_folder is None:
        return None
    safe_run = run_id.replace(":", "_").replace("+", "_")
    folder = logs_folder / f"dag_id={dag_id}" / f"run_id={safe_run}" / f"task_id={task_id}"
    if map_index >= 0:
        folder = folder / f"map_index={map_index}"
    return str(folder / f"attempt={try_number}.log")
