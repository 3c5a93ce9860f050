"""``prefect.client.orchestration``."""

from __future__ import annotations

from statewright.flows.client import PrefectClient, SyncPrefectClient, get_client

__all__ = ["PrefectClient", "SyncPrefectClient", "get_client"]
