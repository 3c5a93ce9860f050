"""DAG versions: a row per change of a DAG; runs and tries point to theirs

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('dag_version',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('dag_id', sa.String(length=250), nullable=False),
    sa.Column('version_number', sa.Integer(), nullable=False),
    sa.Column('structure_hash', sa.String(length=64), nullable=False),
    sa.Column('code_hash', sa.String(length=64), nullable=False),
    sa.Column('serialized', sa.JSON(), nullable=False),
    sa.Column('source_code', sa.Text(), nullable=False),
    sa.Column('fileloc', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['dag_id'], ['dag.dag_id'], name=op.f('fk_dag_version_dag_id_dag'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_dag_version'))
    )
    with op.batch_alter_table('dag_version', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_dag_version_dag_id_version_number'),
                              ['dag_id', 'version_number'], unique=True)
    for table in ('dag_run', 'task_instance', 'task_instance_history'):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column('dag_version_id', sa.Integer(), nullable=True))


def downgrade() -> None:
    for table in ('task_instance_history', 'task_instance', 'dag_run'):
        with op.batch_alter_table(table) as batch:
            batch.drop_column('dag_version_id')
    with op.batch_alter_table('dag_version', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_dag_version_dag_id_version_number'))
    op.drop_table('dag_version')
