"""Tables of flows."""

from __future__ import annotations

from statewright.db.tables import metadata  # noqa: F401
