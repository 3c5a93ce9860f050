"""concurrency leases

- ``concurrency_lease``: the slots of a pool a flow's ``concurrency(...)`` block holds (Prefect's
  global concurrency limits), with the holder and when the lease expires.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'concurrency_lease',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column('pool', sa.String(256), sa.ForeignKey('pool.name', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('slots', sa.Integer(), nullable=False),
        sa.Column('holder', sa.String(1000), nullable=True),
        sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index('ix_concurrency_lease_pool_expires_at', 'concurrency_lease',
                    ['pool', 'expires_at'])


def downgrade() -> None:
    op.drop_index('ix_concurrency_lease_pool_expires_at', table_name='concurrency_lease')
    op.drop_table('concurrency_lease')
