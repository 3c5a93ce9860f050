"""The exceptions ``DockerOperator`` raises when its container exits with a non-zero status."""

from __future__ import annotations

from statewright.core.errors import StatewrightError
from statewright.sdk.exceptions import SkipTask

__all__ = ["DockerContainerFailedException", "DockerContainerFailedSkipException"]


class DockerContainerFailedException(StatewrightError):
    """The container exited with a non-zero status: the try fails (``logs``: its lines)."""

    def __init__(self, message: str | None = None,
                 logs: list[str | bytes] | None = None) -> None:
        super().__init__(message)
        self.logs = logs


class DockerContainerFailedSkipException(SkipTask):
    """The container exited with a status of ``skip_on_exit_code``: the task is skipped."""

    def __init__(self, message: str | None = None,
                 logs: list[str | bytes] | None = None) -> None:
        super().__init__(message)
        self.logs = logs
