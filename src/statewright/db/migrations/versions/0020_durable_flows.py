"""durable flow runs

- ``flow_run.durable``: the run was started by ``@flow(durable=True)``; every completed task
  call's result is recorded with it, and a crashed run can be resumed (its completed calls are
  not made again: their recorded results are returned in call order).
- ``flow_run.retries``: the flow's ``retries`` at the run's start: how often a crashed durable
  run is resumed by itself; ``flow_run.resumes``: how often it has been resumed.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('flow_run') as batch:
        batch.add_column(sa.Column('durable', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
        batch.add_column(sa.Column('retries', sa.Integer(), nullable=False,
                                   server_default='0'))
        batch.add_column(sa.Column('resumes', sa.Integer(), nullable=False,
                                   server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('flow_run') as batch:
        batch.drop_column('resumes')
        batch.drop_column('retries')
        batch.drop_column('durable')
