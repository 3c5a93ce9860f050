"""task and asset state stores: one row per key of a task instance's or an asset's state

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('task_state',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('dag_id', sa.String(length=250), nullable=False),
    sa.Column('run_id', sa.String(length=250), nullable=False),
    sa.Column('task_id', sa.String(length=250), nullable=False),
    sa.Column('map_index', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=250), nullable=False),
    sa.Column('value', sa.Text(), nullable=False),
    sa.Column('retention', sa.String(length=20), nullable=False),
    sa.Column('try_number', sa.Integer(), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_task_state')),
    sa.UniqueConstraint('dag_id', 'run_id', 'task_id', 'map_index', 'key',
                        name='uq_task_state_key')
    )
    op.create_table('asset_state',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('asset_name', sa.String(length=1500), nullable=False),
    sa.Column('key', sa.String(length=250), nullable=False),
    sa.Column('value', sa.Text(), nullable=False),
    sa.Column('dag_id', sa.String(length=250), nullable=True),
    sa.Column('run_id', sa.String(length=250), nullable=True),
    sa.Column('task_id', sa.String(length=250), nullable=True),
    sa.Column('try_number', sa.Integer(), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_asset_state')),
    sa.UniqueConstraint('asset_name', 'key', name='uq_asset_state_key')
    )


def downgrade() -> None:
    op.drop_table('asset_state')
    op.drop_table('task_state')
