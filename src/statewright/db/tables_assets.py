"""Tables of assets: assets, asset events, what each run consumed."""

from __future__ import annotations

from statewright.db.tables import metadata  # noqa: F401
