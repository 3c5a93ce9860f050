"""``BashSensor``: poke by running a command with bash (Airflow's)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from statewright.core.errors import DagDefinitionError
from statewright.sdk.exceptions import FailTask
from statewright.sdk.operators.bash import BashRunning
from statewright.sdk.sensors import base
from statewright.sdk.sensors.base import BaseSensor

__all__ = ["BashSensor"]


class BashSensor(BashRunning, BaseSensor):
    """Each poke runs ``bash_command`` in a fresh temporary directory; exit code 0 means done.

    Without ``retry_exit_code`` any other exit code means "not yet" (the sensor fails only on
    its timeout). With it, that code means "not yet" and any other non-zero code fails the task
    without retry (skips it with ``soft_fail``). ``env``, when given, replaces the inherited
    environment. stderr is merged into stdout; every line goes to the task log.
    """

    template_fields: ClassVar[Sequence[str]] = ("bash_command", "env")
    template_fields_renderers: ClassVar[dict[str, str]] = {"bash_command": "bash", "env": "json"}

    def __init__(
        self,
        *,
        bash_command: Any,
        env: Mapping[str, str] | None = None,
        output_encoding: str = "utf-8",
        retry_exit_code: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        where = f"sensor {self.task_id!r}"
        if retry_exit_code is not None and (isinstance(retry_exit_code, bool)
                                            or not isinstance(retry_exit_code, int)):
            raise DagDefinitionError(
                f"{where}: retry_exit_code must be an int or None, got {retry_exit_code!r}.")
        if env is not None and not isinstance(env, (Mapping, str)):  # str: a template
            raise DagDefinitionError(
                f"{where}: env must be a dict of environment variables or None, got "
                f"{type(env).__name__}.")
        if not isinstance(output_encoding, str) or not output_encoding:
            raise DagDefinitionError(
                f"{where}: output_encoding must be the name of an encoding, got "
                f"{output_encoding!r}.")
        self.bash_command = bash_command
        self.env = env
        self.output_encoding = output_encoding
        self.retry_exit_code = retry_exit_code
        self.cwd = None
        self._process = None

    def poke(self, context: Any) -> bool:
        command = self.bash_command
        if not isinstance(command, str) or not command.strip():
            raise ValueError(f"{self._where}: bash_command must be a non-empty string, got "
                             f"{command!r}")
        exit_code, _ = self._run(command, self._environment())
        if exit_code == 0:
            return True
        if self.retry_exit_code is None:
            base.log.info("Exit code %s and no retry_exit_code: poking again later", exit_code)
            return False
        if exit_code == self.retry_exit_code:
            base.log.info("Exit code %s is the retry_exit_code: poking again later", exit_code)
            return False
        raise FailTask(f"{self._where}: the command exited with code {exit_code} (not 0, nor "
                       f"the retry_exit_code {self.retry_exit_code})")

    def _environment(self) -> dict[str, str]:
        if self.env is None:
            return dict(os.environ)
        if not isinstance(self.env, Mapping):
            raise ValueError(f"{self._where}: env must render to a dict of environment "
                             f"variables, got {type(self.env).__name__}")
        return {str(k): str(v) for k, v in self.env.items()}

    @property
    def _where(self) -> str:
        return f"sensor {self.task_id!r}"
