"""the triggerer's timeout sweep by index

- ``ix_task_instance_state_trigger_timeout``: the triggerer looks for deferred task instances
  whose ``trigger_timeout`` has passed every second; with 100,000 deferred, the (state, dag_id)
  index handed it every deferred row to filter. This one reads only those past their timeout,
  in timeout order.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_task_instance_state_trigger_timeout', 'task_instance',
                    ['state', 'trigger_timeout'])


def downgrade() -> None:
    op.drop_index('ix_task_instance_state_trigger_timeout', table_name='task_instance')
