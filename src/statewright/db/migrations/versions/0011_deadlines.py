"""deadline alerts: one row per alert of a run, indexed by status and time; the DAG's alerts

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('deadline',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('dag_run_id', sa.Integer(), nullable=False),
    sa.Column('dag_id', sa.String(length=250), nullable=False),
    sa.Column('run_id', sa.String(length=250), nullable=False),
    sa.Column('alert_index', sa.Integer(), nullable=False),
    sa.Column('reference', sa.String(length=100), nullable=False),
    sa.Column('deadline_time', sa.DateTime(timezone=True), nullable=False),
    sa.Column('callback', sa.JSON(), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('missed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('cancelled_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('callback_id', sa.Integer(), nullable=True),
    sa.Column('message', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['dag_run_id'], ['dag_run.id'],
                            name=op.f('fk_deadline_dag_run_id_dag_run'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_deadline'))
    )
    with op.batch_alter_table('deadline', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_deadline_dag_run_id'), ['dag_run_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_deadline_status_deadline_time'),
                              ['status', 'deadline_time'], unique=False)
    with op.batch_alter_table('dag') as batch:
        batch.add_column(sa.Column('deadline', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('dag') as batch:
        batch.drop_column('deadline')
    with op.batch_alter_table('deadline', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_deadline_status_deadline_time'))
        batch_op.drop_index(batch_op.f('ix_deadline_dag_run_id'))
    op.drop_table('deadline')
