"""assets: assets, their events and the runs they trigger

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa  # noqa: F401
from alembic import op  # noqa: F401

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
