"""task mapping: map_index in every task instance key

The task instance table already carries ``map_index`` (and now the name ``map_index_template``
gives an instance); its history, the state history and the stored results get the map index
too, and a result's key becomes (dag run, task, map index, key).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('task_instance') as batch:
        batch.add_column(sa.Column('rendered_map_index', sa.String(length=250), nullable=True))
    with op.batch_alter_table('task_instance_history') as batch:
        batch.add_column(sa.Column('map_index', sa.Integer(), nullable=False,
                                   server_default='-1'))
    with op.batch_alter_table('state_transition') as batch:
        batch.add_column(sa.Column('map_index', sa.Integer(), nullable=True))
    with op.batch_alter_table('xcom') as batch:
        batch.add_column(sa.Column('map_index', sa.Integer(), nullable=False,
                                   server_default='-1'))
        batch.drop_constraint('uq_xcom_dag_run_id_task_id_key', type_='unique')
        batch.create_unique_constraint('uq_xcom_dag_run_id_task_id_map_index_key',
                                       ['dag_run_id', 'task_id', 'map_index', 'key'])
    # The defaults served existing rows only; new rows get theirs from the application.
    with op.batch_alter_table('task_instance_history') as batch:
        batch.alter_column('map_index', server_default=None)
    with op.batch_alter_table('xcom') as batch:
        batch.alter_column('map_index', server_default=None)


def downgrade() -> None:
    with op.batch_alter_table('xcom') as batch:
        batch.drop_constraint('uq_xcom_dag_run_id_task_id_map_index_key', type_='unique')
        batch.create_unique_constraint('uq_xcom_dag_run_id_task_id_key',
                                       ['dag_run_id', 'task_id', 'key'])
        batch.drop_column('map_index')
    with op.batch_alter_table('state_transition') as batch:
        batch.drop_column('map_index')
    with op.batch_alter_table('task_instance_history') as batch:
        batch.drop_column('map_index')
    with op.batch_alter_table('task_instance') as batch:
        batch.drop_column('rendered_map_index')
