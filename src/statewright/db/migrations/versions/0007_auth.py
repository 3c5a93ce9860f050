"""users, API tokens and the audit log

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'auth_user',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('username', sa.String(length=64), nullable=False),
        sa.Column('password_hash', sa.String(length=255), nullable=False),
        sa.Column('role', sa.String(length=20), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('tokens_valid_after', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_auth_user'),
        sa.UniqueConstraint('username', name='uq_auth_user_username'),
    )
    op.create_table(
        'auth_token',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=20), nullable=False),
        sa.Column('name', sa.String(length=100), nullable=False),
        sa.Column('token_hash', sa.String(length=64), nullable=False),
        sa.Column('prefix', sa.String(length=16), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['user_id'], ['auth_user.id'],
                                name='fk_auth_token_user_id_auth_user', ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name='pk_auth_token'),
        sa.UniqueConstraint('token_hash', name='uq_auth_token_token_hash'),
    )
    op.create_index('ix_auth_token_user_id_kind', 'auth_token', ['user_id', 'kind'])
    op.create_table(
        'audit_log',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('username', sa.String(length=64), nullable=True),
        sa.Column('action', sa.String(length=100), nullable=False),
        sa.Column('method', sa.String(length=10), nullable=False),
        sa.Column('path', sa.Text(), nullable=False),
        sa.Column('dag_id', sa.String(length=250), nullable=True),
        sa.Column('target', sa.Text(), nullable=True),
        sa.Column('outcome', sa.String(length=20), nullable=False),
        sa.Column('status_code', sa.Integer(), nullable=False),
        sa.Column('client_address', sa.String(length=64), nullable=True),
        sa.Column('detail', sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint('id', name='pk_audit_log'),
    )
    op.create_index('ix_audit_log_at', 'audit_log', ['at'])
    op.create_index('ix_audit_log_dag_id_at', 'audit_log', ['dag_id', 'at'])
    op.create_index('ix_audit_log_username_at', 'audit_log', ['username', 'at'])
    op.create_index('ix_audit_log_action_at', 'audit_log', ['action', 'at'])
    # A person's name is part of the actor now (user:alice, cli:bob).
    if op.get_bind().dialect.name != 'sqlite':  # SQLite does not enforce VARCHAR lengths
        op.alter_column('state_transition', 'actor', type_=sa.String(length=100),
                        existing_nullable=False)
        op.alter_column('dag_run', 'triggered_by', type_=sa.String(length=100),
                        existing_nullable=True)


def downgrade() -> None:
    if op.get_bind().dialect.name != 'sqlite':
        op.alter_column('dag_run', 'triggered_by', type_=sa.String(length=50),
                        existing_nullable=True)
        op.alter_column('state_transition', 'actor', type_=sa.String(length=20),
                        existing_nullable=False)
    op.drop_table('audit_log')
    op.drop_table('auth_token')
    op.drop_table('auth_user')
