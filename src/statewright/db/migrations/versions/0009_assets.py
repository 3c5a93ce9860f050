"""assets: assets, their events and the runs they trigger

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('asset',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('name', sa.String(length=1500), nullable=False),
    sa.Column('uri', sa.String(length=1500), nullable=False),
    sa.Column('group', sa.String(length=1500), nullable=False),
    sa.Column('extra', sa.JSON(), nullable=True),
    sa.Column('watchers', sa.JSON(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_asset')),
    sa.UniqueConstraint('name', name=op.f('uq_asset_name'))
    )
    with op.batch_alter_table('asset', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_asset_uri'), ['uri'], unique=False)

    op.create_table('asset_alias',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('name', sa.String(length=1500), nullable=False),
    sa.Column('group', sa.String(length=1500), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_asset_alias')),
    sa.UniqueConstraint('name', name=op.f('uq_asset_alias_name'))
    )
    op.create_table('asset_alias_asset',
    sa.Column('alias_id', sa.Integer(), nullable=False),
    sa.Column('asset_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['alias_id'], ['asset_alias.id'], name=op.f('fk_asset_alias_asset_alias_id_asset_alias'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['asset_id'], ['asset.id'], name=op.f('fk_asset_alias_asset_asset_id_asset'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('alias_id', 'asset_id', name=op.f('pk_asset_alias_asset'))
    )
    op.create_table('asset_event',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('asset_id', sa.Integer(), nullable=False),
    sa.Column('extra', sa.JSON(), nullable=True),
    sa.Column('source_dag_id', sa.String(length=250), nullable=True),
    sa.Column('source_run_id', sa.String(length=250), nullable=True),
    sa.Column('source_task_id', sa.String(length=250), nullable=True),
    sa.Column('source_map_index', sa.Integer(), nullable=False),
    sa.Column('source_alias', sa.String(length=1500), nullable=True),
    sa.Column('source', sa.String(length=30), nullable=False),
    sa.Column('timestamp', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['asset_id'], ['asset.id'], name=op.f('fk_asset_event_asset_id_asset'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_asset_event'))
    )
    with op.batch_alter_table('asset_event', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_asset_event_asset_id_id'), ['asset_id', 'id'], unique=False)
        batch_op.create_index(batch_op.f('ix_asset_event_source_dag_id_source_run_id'), ['source_dag_id', 'source_run_id'], unique=False)

    op.create_table('asset_watcher',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('asset_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=1500), nullable=False),
    sa.Column('classpath', sa.String(length=1000), nullable=False),
    sa.Column('kwargs', sa.Text(), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('triggerer_id', sa.Integer(), nullable=True),
    sa.Column('failures', sa.Integer(), nullable=False),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('events', sa.Integer(), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['asset_id'], ['asset.id'], name=op.f('fk_asset_watcher_asset_id_asset'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_asset_watcher')),
    sa.UniqueConstraint('asset_id', 'name', name=op.f('uq_asset_watcher_asset_id_name'))
    )
    op.create_table('dag_asset_reference',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('dag_id', sa.String(length=250), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('task_id', sa.String(length=250), nullable=True),
    sa.Column('asset_id', sa.Integer(), nullable=True),
    sa.Column('alias_id', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['alias_id'], ['asset_alias.id'], name=op.f('fk_dag_asset_reference_alias_id_asset_alias'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['asset_id'], ['asset.id'], name=op.f('fk_dag_asset_reference_asset_id_asset'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_dag_asset_reference'))
    )
    with op.batch_alter_table('dag_asset_reference', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_dag_asset_reference_alias_id_kind'), ['alias_id', 'kind'], unique=False)
        batch_op.create_index(batch_op.f('ix_dag_asset_reference_asset_id_kind'), ['asset_id', 'kind'], unique=False)
        batch_op.create_index(batch_op.f('ix_dag_asset_reference_dag_id_kind'), ['dag_id', 'kind'], unique=False)

    op.create_table('asset_event_queue',
    sa.Column('target_dag_id', sa.String(length=250), nullable=False),
    sa.Column('asset_event_id', sa.Integer(), nullable=False),
    sa.Column('asset_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['asset_event_id'], ['asset_event.id'], name=op.f('fk_asset_event_queue_asset_event_id_asset_event'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('target_dag_id', 'asset_event_id', name=op.f('pk_asset_event_queue'))
    )
    op.create_table('dag_run_asset_event',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('dag_run_id', sa.Integer(), nullable=False),
    sa.Column('dag_id', sa.String(length=250), nullable=False),
    sa.Column('asset_event_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['asset_event_id'], ['asset_event.id'], name=op.f('fk_dag_run_asset_event_asset_event_id_asset_event'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['dag_run_id'], ['dag_run.id'], name=op.f('fk_dag_run_asset_event_dag_run_id_dag_run'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_dag_run_asset_event')),
    sa.UniqueConstraint('dag_id', 'asset_event_id', name=op.f('uq_dag_run_asset_event_dag_id_asset_event_id'))
    )
    with op.batch_alter_table('dag_run_asset_event', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_dag_run_asset_event_dag_run_id'), ['dag_run_id'], unique=False)
    _add_dag_run_trigger()


def _add_dag_run_trigger() -> None:
    op.create_table('dag_run_trigger',
    sa.Column('dag_run_id', sa.Integer(), nullable=False),
    sa.Column('parent_run_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['dag_run_id'], ['dag_run.id'], name=op.f('fk_dag_run_trigger_dag_run_id_dag_run'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['parent_run_id'], ['dag_run.id'], name=op.f('fk_dag_run_trigger_parent_run_id_dag_run'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('dag_run_id', name=op.f('pk_dag_run_trigger'))
    )
    with op.batch_alter_table('dag_run_trigger', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_dag_run_trigger_parent_run_id'), ['parent_run_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('dag_run_trigger', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_dag_run_trigger_parent_run_id'))

    op.drop_table('dag_run_trigger')
    with op.batch_alter_table('dag_run_asset_event', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_dag_run_asset_event_dag_run_id'))

    op.drop_table('dag_run_asset_event')
    op.drop_table('asset_event_queue')
    with op.batch_alter_table('dag_asset_reference', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_dag_asset_reference_dag_id_kind'))
        batch_op.drop_index(batch_op.f('ix_dag_asset_reference_asset_id_kind'))
        batch_op.drop_index(batch_op.f('ix_dag_asset_reference_alias_id_kind'))

    op.drop_table('dag_asset_reference')
    op.drop_table('asset_watcher')
    with op.batch_alter_table('asset_event', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_asset_event_source_dag_id_source_run_id'))
        batch_op.drop_index(batch_op.f('ix_asset_event_asset_id_id'))

    op.drop_table('asset_event')
    op.drop_table('asset_alias_asset')
    op.drop_table('asset_alias')
    with op.batch_alter_table('asset', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_asset_uri'))

    op.drop_table('asset')
