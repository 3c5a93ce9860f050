"""Triggers: the conditions a deferred task waits on, run by the triggerer.

Exports the contract (``BaseTrigger``, ``TriggerEvent``, ``import_trigger``,
``TriggerImportError``, ``classpath_of``) and the built-in triggers: ``DateTimeTrigger``,
``TimeDeltaTrigger``, ``FileTrigger`` and ``HttpTrigger``.
"""

from __future__ import annotations

from statewright.sdk.triggers.base import (
    BaseTrigger,
    TriggerEvent,
    TriggerImportError,
    classpath_of,
    import_trigger,
)
from statewright.sdk.triggers.file import FileTrigger
from statewright.sdk.triggers.http import HttpTrigger
from statewright.sdk.triggers.temporal import DateTimeTrigger, TimeDeltaTrigger

__all__ = [
    "BaseTrigger",
    "DateTimeTrigger",
    "FileTrigger",
    "HttpTrigger",
    "TimeDeltaTrigger",
    "TriggerEvent",
    "TriggerImportError",
    "classpath_of",
    "import_trigger",
]
