"""BashOperator: run a command with ``bash -c`` and stream its output to the task log."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Container, Mapping, Sequence
from contextlib import ExitStack
from typing import Any, ClassVar

from statewright.core.errors import DagDefinitionError
from statewright.sdk.baseoperator import BaseOperator
from statewright.sdk.exceptions import SkipTask

log = logging.getLogger("statewright.task")


class BashCommandError(Exception):
    """The command exited with a code that is neither 0 nor a skip code."""


def context_env(context: Mapping[str, Any]) -> dict[str, str]:
    """Environment variables naming the running try (Airflow's ``AIRFLOW_CTX_*``)."""
    env: dict[str, str] = {}
    dag, task, ti = context.get("dag"), context.get("task"), context.get("ti")
    if dag is not None:
        env["STATEWRIGHT_CTX_DAG_ID"] = dag.dag_id
    if task is not None:
        env["STATEWRIGHT_CTX_TASK_ID"] = task.task_id
    if context.get("run_id"):
        env["STATEWRIGHT_CTX_DAG_RUN_ID"] = str(context["run_id"])
    if context.get("logical_date") is not None:
        env["STATEWRIGHT_CTX_LOGICAL_DATE"] = context["logical_date"].isoformat()
    if ti is not None:
        env["STATEWRIGHT_CTX_TRY_NUMBER"] = str(ti.try_number)
    return env


class BashRunning:
    """Running a command with ``bash -c``, its output streamed to the task log, and killing it
    (the operator's and ``BashSensor``'s). Uses the task's ``cwd`` (None: a fresh temporary
    directory) and ``output_encoding``."""

    cwd: str | None
    output_encoding: str
    _process: subprocess.Popen[bytes] | None = None

    def _run(self, command: str, env: dict[str, str]) -> tuple[int, str]:
        bash = shutil.which("bash") or "bash"
        with ExitStack() as stack:
            cwd = self.cwd or stack.enter_context(tempfile.TemporaryDirectory(prefix="statewright"))
            log.info("Running command: %s", command)
            with subprocess.Popen(
                [bash, "-c", command],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=env,
                start_new_session=True,
            ) as process:
                self._process = process
                try:
                    last_line = ""
                    assert process.stdout is not None
                    for raw in iter(process.stdout.readline, b""):
                        last_line = raw.decode(self.output_encoding, errors="backslashreplace")
                        last_line = last_line.rstrip()
                        log.info("%s", last_line)
                    process.wait()
                finally:
                    self.on_kill()  # a no-op once the command has exited
                    self._process = None
        log.info("Command exited with return code %s", process.returncode)
        return process.returncode, last_line

    def on_kill(self) -> None:
        """Terminate the command's whole process group (SIGTERM, then SIGKILL)."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                return
            try:
                process.wait(timeout=grace)
                return
            except subprocess.TimeoutExpired:
                continue


class BashOperator(BashRunning, BaseOperator):
    """Run ``bash_command``; return the last line it printed.

    Exit code 0 succeeds; an exit code in ``skip_on_exit_code`` (99 by default) skips the task;
    any other fails it. ``env`` replaces the inherited environment unless ``append_env=True``.
    Without ``cwd`` the command runs in a fresh temporary directory. stderr is merged into
    stdout, and every line goes to the ``statewright.task`` logger.
    """

    template_fields: ClassVar[Sequence[str]] = ("bash_command", "env", "cwd")
    # A command ending in .sh or .bash names a template file (end it with a space to run the
    # script as it is, as in Airflow).
    template_ext: ClassVar[Sequence[str]] = (".sh", ".bash")
    template_fields_renderers: ClassVar[dict[str, str]] = {"bash_command": "bash", "env": "json"}

    def __init__(
        self,
        *,
        bash_command: Any,
        env: dict[str, str] | None = None,
        append_env: bool = False,
        output_encoding: str = "utf-8",
        skip_on_exit_code: int | Container[int] | None = 99,
        cwd: str | None = None,
        output_processor: Callable[[str], Any] = lambda output: output,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.bash_command = bash_command
        self.env = env
        self.append_env = append_env
        self.output_encoding = output_encoding
        if skip_on_exit_code is None:
            self.skip_on_exit_code: Container[int] = ()
        elif isinstance(skip_on_exit_code, int) and not isinstance(skip_on_exit_code, bool):
            self.skip_on_exit_code = (skip_on_exit_code,)
        elif isinstance(skip_on_exit_code, Container):
            self.skip_on_exit_code = skip_on_exit_code
        else:
            raise DagDefinitionError(
                f"task {self.task_id!r}: skip_on_exit_code must be an int, a list of ints or "
                f"None, got {skip_on_exit_code!r}."
            )
        self.cwd = cwd
        self.output_processor = output_processor
        self._process: subprocess.Popen[bytes] | None = None

    def get_env(self, context: Mapping[str, Any]) -> dict[str, str]:
        if self.env is None:
            env = dict(os.environ)
        elif self.append_env:
            env = {**os.environ, **self.env}
        else:
            env = dict(self.env)
        env.update(context_env(context))
        return env

    def execute(self, context: Any) -> Any:
        command = self.bash_command
        if not isinstance(command, str) or not command.strip():
            raise ValueError(
                f"task {self.task_id!r}: bash_command must be a non-empty string, got {command!r}"
            )
        if self.cwd is not None:
            if not os.path.exists(self.cwd):
                raise FileNotFoundError(f"task {self.task_id!r}: cwd {self.cwd!r} does not exist")
            if not os.path.isdir(self.cwd):
                raise NotADirectoryError(
                    f"task {self.task_id!r}: cwd {self.cwd!r} is not a directory"
                )
        exit_code, last_line = self._run(command, self.get_env(context))
        if exit_code in self.skip_on_exit_code:
            raise SkipTask(f"Bash command returned exit code {exit_code}. Skipping.")
        if exit_code != 0:
            raise BashCommandError(
                f"Bash command failed. The command returned a non-zero exit code {exit_code}."
            )
        return self.output_processor(last_line)
