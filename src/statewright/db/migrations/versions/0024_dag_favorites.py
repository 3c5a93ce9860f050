"""dag favorites

- ``dag_favorite``: the DAGs a user starred in the DAG list (Airflow 3.1's favourite DAGs), one
  row per user and DAG; gone with the user or the DAG.

Revision ID: 0024
Revises: the newest revision before it (0023, or 0021/0022 while those numbers are unused)
Create Date: 2026-11-28
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision = '0024'
# The revisions 0022 and 0023 are numbers held for other changes; this one follows whichever of
# them exists, so the chain has one head whatever order they arrive in.
down_revision = max(p.name.split('_', 1)[0] for p in Path(__file__).parent.glob('[0-9]*.py')
                    if p.name.split('_', 1)[0] < revision)
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
