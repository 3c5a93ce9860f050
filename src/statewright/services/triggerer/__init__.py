"""The triggerer: an asyncio loop running the triggers deferred task instances wait on.

Exports ``TriggererJob`` and ``TriggererConfig`` (the service), ``TriggerRunner`` (its event
loop) and ``run_deferred_triggers`` (the in-process runner of ``dag.test()``).
"""

from __future__ import annotations

from statewright.services.triggerer.inprocess import run_deferred_triggers
from statewright.services.triggerer.job import TriggererConfig, TriggererJob, TriggererStats
from statewright.services.triggerer.runner import TriggerRunner

__all__ = [
    "TriggerRunner",
    "TriggererConfig",
    "TriggererJob",
    "TriggererStats",
    "run_deferred_triggers",
]
