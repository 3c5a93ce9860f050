"""``@task.sensor``: a TaskFlow function as the poke of a sensor (Airflow's sensor decorator).

The function is called on each poke; it returns a bool or a ``PokeReturnValue`` (whose
``xcom_value`` becomes the task's result once it is done). Every ``BaseSensor`` argument applies:
``mode="poke"`` or ``"reschedule"``, ``poke_interval``, ``timeout``, ``soft_fail``,
``exponential_backoff``.
"""

from __future__ import annotations

from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.sdk.sensors.python import PythonSensor

__all__ = ["DecoratedSensorOperator"]


class DecoratedSensorOperator(PythonSensor):
    """The operator behind ``@task.sensor``."""

    custom_operator_name = "@task.sensor"

    def __init__(self, **kwargs: Any) -> None:
        if kwargs.pop("multiple_outputs", False):
            raise DagDefinitionError(
                f"task {kwargs.get('task_id')!r}: @task.sensor does not take "
                "multiple_outputs=True; return a PokeReturnValue whose xcom_value is a dict "
                "and read its items downstream.")
        super().__init__(**kwargs)
