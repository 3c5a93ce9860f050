"""controls: the task result cache and the outbox of DAG-level callbacks

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('task_cache',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('dag_id', sa.String(length=250), nullable=False),
    sa.Column('task_id', sa.String(length=250), nullable=False),
    sa.Column('cache_key', sa.String(length=500), nullable=False),
    sa.Column('value', sa.JSON(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('run_id', sa.String(length=250), nullable=True),
    sa.Column('try_number', sa.Integer(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_task_cache')),
    sa.UniqueConstraint('dag_id', 'task_id', 'cache_key',
                        name=op.f('uq_task_cache_dag_id_task_id_cache_key'))
    )
    op.create_table('dag_callback',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('dag_run_id', sa.Integer(), nullable=False),
    sa.Column('dag_id', sa.String(length=250), nullable=False),
    sa.Column('run_id', sa.String(length=250), nullable=False),
    sa.Column('kind', sa.String(length=30), nullable=False),
    sa.Column('run_state', sa.String(length=20), nullable=False),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('claimed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('claimed_by', sa.String(length=250), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['dag_run_id'], ['dag_run.id'],
                            name=op.f('fk_dag_callback_dag_run_id_dag_run'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_dag_callback'))
    )
    with op.batch_alter_table('dag_callback', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_dag_callback_status_created_at'),
                              ['status', 'created_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('dag_callback', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_dag_callback_status_created_at'))
    op.drop_table('dag_callback')
    op.drop_table('task_cache')
