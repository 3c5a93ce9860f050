"""Tables of authentication: users, API tokens, the audit log."""

from __future__ import annotations

from statewright.db.tables import metadata  # noqa: F401
