"""Airflow 2's decorator names in ``airflow.decorators`` (``branch_task``, ``python_task`` ...):
each is a kind of ``@task`` (``branch_task`` is ``task.branch``)."""

from __future__ import annotations

from typing import Any

KINDS: dict[str, str] = {
    "python_task": "python",
    "branch_task": "branch",
    "short_circuit_task": "short_circuit",
    "sensor_task": "sensor",
    "virtualenv_task": "virtualenv",
    "external_python_task": "external_python",
    "branch_virtualenv_task": "branch_virtualenv",
    "branch_external_python_task": "branch_external_python",
    "bash_task": "bash",
}
"""Airflow 2 decorator name → the attribute of ``task`` it is."""

__all__ = sorted(KINDS)  # the names __getattr__ answers


def __getattr__(name: str) -> Any:
    if name in KINDS:
        from statewright.sdk import task

        return getattr(task, KINDS[name])
    raise AttributeError(name)
