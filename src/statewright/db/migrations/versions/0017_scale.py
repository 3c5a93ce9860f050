"""scale: indexes for scheduler work proportional to what changed

- ``ix_dag_dag_id_dag_hash``: the scheduler and the workers read a DAG's hash on every loop. On
  SQLite the ``dag`` row carries the serialized DAG (megabytes for 10,000 tasks) before
  ``dag_hash``, so reading the hash from the row walks the row's overflow pages; this covering
  index answers it from the index alone (``INDEXED BY`` on SQLite, whose planner would take
  the primary key's index and then the row).
- ``ix_dag_kind_dag_id``: the running runs the scheduler reads on every loop leave out flows'
  runs by this index rather than by reading ``kind`` from each DAG's (large) row.
- ``ix_task_instance_queue_order``: the queueing candidates are read per run, highest
  ``priority_weight`` first, from this index (the first few of each running run) instead of
  sorting every scheduled task instance of every run on every pass. It leads with ``state``
  so that reads of all of a run's task instances keep the unique (dag_run_id, task_id,
  map_index) index and its order.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_dag_dag_id_dag_hash', 'dag', ['dag_id', 'dag_hash'])
    op.create_index('ix_dag_kind_dag_id', 'dag', ['kind', 'dag_id'])
    op.create_index('ix_task_instance_queue_order', 'task_instance',
                    ['state', 'dag_run_id', sa.text('priority_weight DESC'), 'id'])


def downgrade() -> None:
    op.drop_index('ix_task_instance_queue_order', table_name='task_instance')
    op.drop_index('ix_dag_kind_dag_id', table_name='dag')
    op.drop_index('ix_dag_dag_id_dag_hash', table_name='dag')
