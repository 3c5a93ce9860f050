"""partitioned assets: the partition key of runs and asset events

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('dag_run', schema=None) as batch_op:
        batch_op.add_column(sa.Column('partition_key', sa.String(length=250), nullable=True))
        batch_op.add_column(sa.Column('partition_date', sa.DateTime(timezone=True),
                                      nullable=True))
        batch_op.create_index(batch_op.f('ix_dag_run_dag_id_partition_key'),
                              ['dag_id', 'partition_key'], unique=False)
    with op.batch_alter_table('asset_event', schema=None) as batch_op:
        batch_op.add_column(sa.Column('partition_key', sa.String(length=250), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('asset_event', schema=None) as batch_op:
        batch_op.drop_column('partition_key')
    with op.batch_alter_table('dag_run', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_dag_run_dag_id_partition_key'))
        batch_op.drop_column('partition_date')
        batch_op.drop_column('partition_key')
