"""Tables of connections and variables (secrets encrypted at rest)."""

from __future__ import annotations

from statewright.db.tables import metadata  # noqa: F401
