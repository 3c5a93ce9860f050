"""flows: runs of Python functions whose task calls unfold as they happen

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('dag', schema=None) as batch_op:
        batch_op.add_column(sa.Column('kind', sa.String(length=20), nullable=False,
                                      server_default='dag'))
    op.create_table('flow_run',
    sa.Column('dag_run_id', sa.Integer(), nullable=False),
    sa.Column('parent_dag_run_id', sa.Integer(), nullable=True),
    sa.Column('parent_task_instance_id', sa.Integer(), nullable=True),
    sa.Column('parameters', sa.JSON(), nullable=True),
    sa.Column('deployment', sa.String(length=250), nullable=True),
    sa.Column('hostname', sa.String(length=1000), nullable=True),
    sa.Column('pid', sa.Integer(), nullable=True),
    sa.Column('recorder_pid', sa.Integer(), nullable=True),
    sa.Column('last_heartbeat_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['dag_run_id'], ['dag_run.id'],
                            name=op.f('fk_flow_run_dag_run_id_dag_run'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['parent_dag_run_id'], ['dag_run.id'],
                            name=op.f('fk_flow_run_parent_dag_run_id_dag_run'),
                            ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('dag_run_id', name=op.f('pk_flow_run'))
    )
    with op.batch_alter_table('flow_run', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_flow_run_last_heartbeat_at'), ['last_heartbeat_at'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_flow_run_parent_dag_run_id'), ['parent_dag_run_id'],
                              unique=False)
    op.create_table('flow_deployment',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('dag_id', sa.String(length=250), nullable=False),
    sa.Column('name', sa.String(length=250), nullable=False),
    sa.Column('entrypoint', sa.Text(), nullable=False),
    sa.Column('parameters', sa.JSON(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['dag_id'], ['dag.dag_id'],
                            name=op.f('fk_flow_deployment_dag_id_dag'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_flow_deployment')),
    sa.UniqueConstraint('dag_id', 'name', name=op.f('uq_flow_deployment_dag_id_name'))
    )


def downgrade() -> None:
    op.drop_table('flow_deployment')
    with op.batch_alter_table('flow_run', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_flow_run_parent_dag_run_id'))
        batch_op.drop_index(batch_op.f('ix_flow_run_last_heartbeat_at'))
    op.drop_table('flow_run')
    with op.batch_alter_table('dag', schema=None) as batch_op:
        batch_op.drop_column('kind')
