"""flow runs: what a paused flow run waits for, and the inputs of its resumed pauses

``flow_run.wanted_input``: the pause under way (its key, and the JSON schema of the input it
waits for, or null); ``flow_run.pause_inputs``: the pauses already resumed, by key, with the
input each was given (null without one). A resumed flow run that runs again (a suspended one)
passes the pauses it already went through.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('flow_run', schema=None) as batch_op:
        batch_op.add_column(sa.Column('wanted_input', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('pause_inputs', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('flow_run', schema=None) as batch_op:
        batch_op.drop_column('pause_inputs')
        batch_op.drop_column('wanted_input')
