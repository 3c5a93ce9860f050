"""scheduling: DAG file state, backfills, the default pool, indexes for run creation

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('dag_file',
    sa.Column('fileloc', sa.Text(), nullable=False),
    sa.Column('mtime', sa.Float(), nullable=False),
    sa.Column('size', sa.Integer(), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=True),
    sa.Column('dag_ids', sa.JSON(), nullable=False),
    sa.Column('last_parsed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('parse_duration', sa.Float(), nullable=True),
    sa.PrimaryKeyConstraint('fileloc', name=op.f('pk_dag_file'))
    )
    op.create_table('backfill',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('dag_id', sa.String(length=250), nullable=False),
    sa.Column('from_date', sa.DateTime(timezone=True), nullable=False),
    sa.Column('to_date', sa.DateTime(timezone=True), nullable=False),
    sa.Column('run_backwards', sa.Boolean(), nullable=False),
    sa.Column('dag_run_conf', sa.JSON(), nullable=True),
    sa.Column('reprocess_behavior', sa.String(length=20), nullable=False),
    sa.Column('max_active_runs', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('completed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['dag_id'], ['dag.dag_id'], name=op.f('fk_backfill_dag_id_dag'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_backfill'))
    )
    with op.batch_alter_table('backfill', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_backfill_completed_at'), ['completed_at'],
                              unique=False)

    op.create_table('backfill_dag_run',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('backfill_id', sa.Integer(), nullable=False),
    sa.Column('sort_ordinal', sa.Integer(), nullable=False),
    sa.Column('logical_date', sa.DateTime(timezone=True), nullable=False),
    sa.Column('data_interval_start', sa.DateTime(timezone=True), nullable=False),
    sa.Column('data_interval_end', sa.DateTime(timezone=True), nullable=False),
    sa.Column('run_after', sa.DateTime(timezone=True), nullable=False),
    sa.Column('dag_run_id', sa.Integer(), nullable=True),
    sa.Column('exception_reason', sa.String(length=50), nullable=True),
    sa.ForeignKeyConstraint(['backfill_id'], ['backfill.id'],
                            name=op.f('fk_backfill_dag_run_backfill_id_backfill'),
                            ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['dag_run_id'], ['dag_run.id'],
                            name=op.f('fk_backfill_dag_run_dag_run_id_dag_run'),
                            ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_backfill_dag_run')),
    sa.UniqueConstraint('backfill_id', 'logical_date',
                        name=op.f('uq_backfill_dag_run_backfill_id_logical_date'))
    )
    with op.batch_alter_table('dag', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_dag_next_dagrun_create_after'),
                              ['next_dagrun_create_after'], unique=False)
    with op.batch_alter_table('dag_run', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_dag_run_dag_id_logical_date'),
                              ['dag_id', 'logical_date'], unique=False)

    pool = sa.table('pool', sa.column('name', sa.String), sa.column('slots', sa.Integer),
                    sa.column('description', sa.Text),
                    sa.column('include_deferred', sa.Boolean))
    op.bulk_insert(pool, [{'name': 'default_pool', 'slots': 128,
                           'description': 'Default pool', 'include_deferred': False}])


def downgrade() -> None:
    op.execute("DELETE FROM pool WHERE name = 'default_pool'")
    with op.batch_alter_table('dag_run', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_dag_run_dag_id_logical_date'))
    with op.batch_alter_table('dag', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_dag_next_dagrun_create_after'))
    op.drop_table('backfill_dag_run')
    with op.batch_alter_table('backfill', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_backfill_completed_at'))
    op.drop_table('backfill')
    op.drop_table('dag_file')
