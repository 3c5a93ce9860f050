"""``prefect.exceptions``: the exceptions real Prefect files catch."""

from __future__ import annotations

from statewright.flows.blocks.core import BlockNotFound
from statewright.flows.context import MissingContextError
from statewright.flows.engine import TerminationSignal, UpstreamTaskError
from statewright.flows.states import CancelledRun, CrashedRun, FailedRun, UnfinishedRun

__all__ = ["CancelledRun", "CrashedRun", "FailedRun", "MissingContextError", "ObjectNotFound",
           "PrefectException", "TerminationSignal", "UnfinishedRun", "UpstreamTaskError"]


class PrefectException(Exception):
    """Prefect's base exception (statewright's own errors do not derive from it)."""


ObjectNotFound = BlockNotFound
"""What a missing block (or other stored object) raises."""
