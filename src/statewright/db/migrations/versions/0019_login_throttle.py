"""login attempts counted before the password is checked

- ``login_throttle``: one row per subject (an account seen from one client address, or one
  client address), counted atomically before a password is verified, so that concurrent
  guesses cannot all be evaluated; the delay before the next attempt grows with the count.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'login_throttle',
        sa.Column('scope', sa.String(length=10), nullable=False),
        sa.Column('subject', sa.String(length=200), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('blocked_until', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('scope', 'subject', name='pk_login_throttle'),
    )
    op.create_index('ix_login_throttle_blocked_until', 'login_throttle', ['blocked_until'])


def downgrade() -> None:
    op.drop_index('ix_login_throttle_blocked_until', table_name='login_throttle')
    op.drop_table('login_throttle')
