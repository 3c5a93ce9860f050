"""Prefect's blocks (``prefect.blocks``): typed configuration saved and loaded by name."""

from __future__ import annotations

from statewright.flows.blocks.core import Block, BlockNotFound
from statewright.flows.blocks.system import JSON, DateTime, Secret, String

__all__ = ["JSON", "Block", "BlockNotFound", "DateTime", "Secret", "String"]
