"""``LoggingMixin``: Airflow's ``.log`` for operators, sensors, hooks and a user's own classes.

``self.log`` is a ``logging.Logger`` made on first use. Its name is the class's
``_log_config_logger_name`` prefix (``statewright.task.operators`` for operators and sensors,
``statewright.task.hooks`` for hooks) followed by the class's module and name, as Airflow names
``airflow.task.operators.<module>.<Class>``; a class without a prefix logs under
``<module>.<Class>``. A ``logger_name`` given to an operator or a hook replaces the module and
class part. Records propagate to the root logger, where a try's task log is attached, so
``self.log.info("x %s", y)`` in ``execute`` appears in that try's log.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

__all__ = ["LoggingMixin", "logger_name_for"]

TASK_LOGGER = "statewright.task"


def logger_name_for(cls: type[Any], prefix: str | None, own_name: str | None = None) -> str:
    """The logger name of an instance of ``cls``: ``prefix.own_name`` or ``prefix.module.Class``."""
    tail = own_name or f"{cls.__module__}.{cls.__name__}"
    return f"{prefix}.{tail}" if prefix else tail


class LoggingMixin:
    """Gives its subclasses a ``log`` property (a ``logging.Logger`` named after the class)."""

    _log_config_logger_name: ClassVar[str | None] = None
    _logger_name: str | None = None
    _log: logging.Logger | None = None

    def __init__(self, context: Any = None) -> None:
        # Airflow's signature; the context (a task instance, for handlers) is not needed here.
        del context

    @property
    def log(self) -> logging.Logger:
        """The logger of this object, made on first use."""
        logger = self.__dict__.get("_log")
        if logger is None:
            name = logger_name_for(type(self), self._log_config_logger_name, self._logger_name)
            logger = logging.getLogger(name)
            self.__dict__["_log"] = logger
        return logger

    @log.setter
    def log(self, logger: logging.Logger) -> None:
        self.__dict__["_log"] = logger
