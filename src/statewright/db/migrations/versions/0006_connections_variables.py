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
    op.create_table('task_instance_mask',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('task_instance_id', sa.Integer(), nullable=False),
    sa.Column('try_number', sa.Integer(), nullable=False),
    sa.Column('secrets', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['task_instance_id'], ['task_instance.id'],
                            name=op.f('fk_task_instance_mask_task_instance_id_task_instance'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_task_instance_mask')),
    sa.UniqueConstraint('task_instance_id', 'try_number',
                        name=op.f('uq_task_instance_mask_task_instance_id_try_number'))
    )


def downgrade() -> None:
    op.drop_table('task_instance_mask')
    op.drop_table('variable')
    op.drop_table('connection')
