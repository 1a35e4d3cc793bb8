"""fleet_jobs.lease_until: a running job's lease, renewed by the worker that runs it

A job is claimed only when it is queued or its lease has expired (its worker died or stopped), so a
message delivered twice runs the job once while its worker lives. Downgrade drops the column.

Revision ID: 0007
Revises: 0006
"""
from alembic import op
import sqlalchemy as sa

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('fleet_jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('fleet_jobs', schema=None) as batch_op:
        batch_op.drop_column('lease_until')
