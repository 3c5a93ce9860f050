"""``prefect.concurrency.sync``: ``concurrency`` as a context manager."""

from __future__ import annotations

from statewright.flows.concurrency import ConcurrencySlotAcquisitionError, concurrency

__all__ = ["ConcurrencySlotAcquisitionError", "concurrency"]
