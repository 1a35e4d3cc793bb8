"""fleet_jobs (jobs of the Celery runner fleet) replaces ci_jobs (the hand-written PostgreSQL queue)

Revision ID: 0004
Revises: 0003
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql')


def upgrade() -> None:
    with op.batch_alter_table('ci_jobs', schema=None) as batch_op:
        batch_op.drop_index('ix_jobs_claim')
    op.drop_table('ci_jobs')
    op.create_table('fleet_jobs',
    sa.Column('id', sa.String(length=32), nullable=False),
    sa.Column('batch', sa.String(length=64), nullable=False),
    sa.Column('label', sa.String(length=64), nullable=False),
    sa.Column('spec', JSON, nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('worker', sa.String(length=128), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('run_id', sa.String(length=64), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('fleet_jobs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_fleet_jobs_batch'), ['batch'], unique=False)


def downgrade() -> None:
    raise NotImplementedError("the hand-written queue (ci_jobs) is gone; downgrading past 0004 is not supported")
