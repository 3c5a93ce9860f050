"""templating: the fields each try rendered

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('rendered_task_instance_fields',
    sa.Column('task_instance_id', sa.Integer(), nullable=False),
    sa.Column('try_number', sa.Integer(), nullable=False),
    sa.Column('dag_id', sa.String(length=250), nullable=False),
    sa.Column('run_id', sa.String(length=250), nullable=False),
    sa.Column('task_id', sa.String(length=250), nullable=False),
    sa.Column('rendered_fields', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['task_instance_id'], ['task_instance.id'],
                            name=op.f('fk_rendered_task_instance_fields_task_instance_id_task_instance'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('task_instance_id', 'try_number',
                            name=op.f('pk_rendered_task_instance_fields'))
    )


def downgrade() -> None:
    op.drop_table('rendered_task_instance_fields')
