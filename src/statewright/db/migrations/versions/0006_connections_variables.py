"""connections and variables, secrets encrypted at rest

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('connection',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('conn_id', sa.String(length=250), nullable=False),
    sa.Column('conn_type', sa.String(length=500), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('host', sa.String(length=500), nullable=True),
    sa.Column('schema', sa.String(length=500), nullable=True),
    sa.Column('login', sa.Text(), nullable=True),
    sa.Column('password', sa.Text(), nullable=True),
    sa.Column('port', sa.Integer(), nullable=True),
    sa.Column('extra', sa.Text(), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_connection')),
    sa.UniqueConstraint('conn_id', name=op.f('uq_connection_conn_id'))
    )
    op.create_table('variable',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('key', sa.String(length=250), nullable=False),
    sa.Column('val', sa.Text(), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_variable')),
    sa.UniqueConstraint('key', name=op.f('uq_variable_key'))
    )


def downgrade() -> None:
    op.drop_table('variable')
    op.drop_table('connection')
