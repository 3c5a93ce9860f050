"""dag favorites

- ``dag_favorite``: the DAGs a user starred in the DAG list (Airflow 3.1's favourite DAGs), one
  row per user and DAG; gone with the user or the DAG.

Revision ID: 0024
Revises: 0022
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0024'
down_revision = '0022'  # the number 0023 was held for a change that needed no migration
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'dag_favorite',
        sa.Column('user_id', sa.Integer(), sa.ForeignKey('auth_user.id', ondelete='CASCADE'),
                  primary_key=True),
        sa.Column('dag_id', sa.String(250), sa.ForeignKey('dag.dag_id', ondelete='CASCADE'),
                  primary_key=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index('ix_dag_favorite_dag_id', 'dag_favorite', ['dag_id'])


def downgrade() -> None:
    op.drop_index('ix_dag_favorite_dag_id', table_name='dag_favorite')
    op.drop_table('dag_favorite')
