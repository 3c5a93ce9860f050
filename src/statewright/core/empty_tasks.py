"""Empty tasks: task instances the scheduler sets to ``success`` itself (Airflow's EmptyOperator).

Airflow's scheduler never sends a task instance of an ``EmptyOperator`` to an executor: its
``DagRun.schedule_tis`` sets it to ``success`` (start and end at the same moment) when the task
is not "schedulable" (``TaskInstance.is_task_schedulable``): its operator inherits from the empty
operator and it has no ``on_execute_callback``, no ``on_success_callback``, no ``outlets`` and no
``inlets``. The same rule here, in two halves:

- at parse time (``declares_empty``): the operator's class runs nothing. That is, the class that
  gives it its ``execute`` declares ``inherits_from_empty_operator = True`` (``EmptyOperator``
  does, and a user's class may, as in Airflow). A subclass that overrides ``execute`` (without
  declaring it again) runs: its code is what the user wrote the class for. The serialized task
  carries the answer as ``inherits_from_empty_operator``;
- in the scheduler (``runs_nothing``): from the serialized task alone (the scheduler never imports
  user code), that flag, no callback that a try would call (``on_execute``, ``on_success``, a
  state-change hook), no outlets and no inlets, and not mapped (a mapped task expands first; its
  instances run).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FLAG = "inherits_from_empty_operator"
"""The class attribute (Airflow's name) and the serialized task's key."""

MESSAGE = "empty task (EmptyOperator): nothing to run, set to success by the scheduler"
"""The history's message for the scheduler's success of an empty task instance."""

_TRY_CALLBACKS = ("on_execute", "on_success", "on_state")


def declares_empty(cls: type) -> bool:
    """Whether an operator class runs nothing: the class in its MRO that defines ``execute``
    declares ``inherits_from_empty_operator = True`` in its own body."""
    for klass in cls.__mro__:
        own = vars(klass)
        if "execute" in own:
            return own.get(FLAG) is True
    return False


def runs_nothing(task: Mapping[str, Any]) -> bool:
    """Whether the scheduler sets the serialized ``task``'s instances to success itself."""
    if not task.get(FLAG) or task.get("expand_input") is not None:
        return False
    callbacks = task.get("has_callbacks") or {}
    if any(callbacks.get(name) for name in _TRY_CALLBACKS):
        return False
    return not task.get("outlets") and not task.get("inlets")
