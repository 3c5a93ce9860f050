"""human-in-the-loop: hitl_detail (the request of a task awaiting input and its response)

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('hitl_detail',
    sa.Column('ti_id', sa.Integer(), nullable=False),
    sa.Column('try_number', sa.Integer(), nullable=False),
    sa.Column('subject', sa.Text(), nullable=False),
    sa.Column('body', sa.Text(), nullable=True),
    sa.Column('options', sa.JSON(), nullable=False),
    sa.Column('multiple', sa.Boolean(), nullable=False),
    sa.Column('defaults', sa.JSON(), nullable=True),
    sa.Column('params', sa.JSON(), nullable=True),
    sa.Column('respondents', sa.JSON(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('timeout_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('chosen_options', sa.JSON(), nullable=True),
    sa.Column('params_input', sa.JSON(), nullable=True),
    sa.Column('responded_by', sa.String(length=250), nullable=True),
    sa.Column('responded_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('timed_out', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['ti_id'], ['task_instance.id'],
                            name=op.f('fk_hitl_detail_ti_id_task_instance'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('ti_id', name=op.f('pk_hitl_detail'))
    )
    with op.batch_alter_table('hitl_detail', schema=None) as batch_op:
        batch_op.create_index('ix_hitl_detail_pending_timeout', ['responded_at', 'timeout_at'],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table('hitl_detail', schema=None) as batch_op:
        batch_op.drop_index('ix_hitl_detail_pending_timeout')
    op.drop_table('hitl_detail')
