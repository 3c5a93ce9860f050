"""Triggers: the conditions a deferred task waits on, run by the triggerer.

Exports the contract (``BaseTrigger``, ``TriggerEvent``, ``import_trigger``,
``TriggerImportError``, ``classpath_of``) and the built-in triggers: ``DateTimeTrigger``,
``TimeDeltaTrigger``, ``FileTrigger`` and ``HttpTrigger``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from statewright.core.lazy import lazy_exports
from statewright.sdk.triggers.base import (
    BaseTrigger,
    TriggerEvent,
    TriggerImportError,
    classpath_of,
    import_trigger,
)
from statewright.sdk.triggers.file import FileTrigger
from statewright.sdk.triggers.temporal import DateTimeTrigger, TimeDeltaTrigger

if TYPE_CHECKING:
    from statewright.sdk.triggers.http import HttpTrigger

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


# httpx: see ``statewright.sdk.hooks``.
__getattr__ = lazy_exports(__name__, {"HttpTrigger": "statewright.sdk.triggers.http"})
