"""notes

- ``note``: the notes people write on DAG runs and task instances (Airflow 3's ``note``), one
  row per note written: who, when, the text (NULL: the note was cleared). A run's or task
  instance's note is its newest row; the rows before it are the note's history. Gone with the
  run.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'note',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column('dag_run_id', sa.Integer(), sa.ForeignKey('dag_run.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('task_id', sa.String(250), nullable=True),
        sa.Column('map_index', sa.Integer(), nullable=True),
        sa.Column('content', sa.Text(), nullable=True),
        sa.Column('username', sa.String(100), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index('ix_note_dag_run_id_task_id_map_index', 'note',
                    ['dag_run_id', 'task_id', 'map_index'])


def downgrade() -> None:
    op.drop_index('ix_note_dag_run_id_task_id_map_index', table_name='note')
    op.drop_table('note')
