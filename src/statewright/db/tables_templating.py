"""Tables of templating: the fields each try rendered."""

from __future__ import annotations

from statewright.db.tables import metadata  # noqa: F401
