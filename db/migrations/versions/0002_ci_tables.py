"""CI tables: mutes, change points, acknowledgements, gate reports, job queue

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 19:31:33.043978
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('ci_gate_reports',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('baseline_ref', sa.String(length=512), nullable=False),
    sa.Column('candidate_ref', sa.String(length=512), nullable=False),
    sa.Column('baseline_run_id', sa.String(length=64), nullable=True),
    sa.Column('candidate_run_id', sa.String(length=64), nullable=True),
    sa.Column('verdict', sa.String(length=16), nullable=False),
    sa.Column('counts', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('report', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('ci_gate_reports', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_ci_gate_reports_created_at'), ['created_at'], unique=False)

    op.create_table('ci_jobs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('payload', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('runner_label', sa.String(length=128), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('priority', sa.Integer(), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('claimed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('claimed_by', sa.String(length=128), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('run_id', sa.String(length=64), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('ci_jobs', schema=None) as batch_op:
        batch_op.create_index('ix_jobs_claim', ['status', 'priority', 'id'], unique=False)

    op.create_table('ci_mutes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('technique', sa.String(length=128), nullable=False),
    sa.Column('impl', sa.String(length=128), nullable=True),
    sa.Column('case_id', sa.String(length=256), nullable=True),
    sa.Column('metric', sa.String(length=64), nullable=True),
    sa.Column('hardware_key', sa.String(length=16), nullable=True),
    sa.Column('who', sa.String(length=128), nullable=False),
    sa.Column('why', sa.Text(), nullable=False),
    sa.Column('until', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('ci_mutes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_ci_mutes_technique'), ['technique'], unique=False)

    op.create_table('ci_change_points',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('technique', sa.String(length=128), nullable=False),
    sa.Column('impl', sa.String(length=128), nullable=False),
    sa.Column('case_id', sa.String(length=256), nullable=False),
    sa.Column('metric', sa.String(length=64), nullable=False),
    sa.Column('hardware_key', sa.String(length=16), nullable=False),
    sa.Column('software_key', sa.String(length=16), nullable=False),
    sa.Column('protocol', sa.String(length=64), nullable=False),
    sa.Column('run_id', sa.String(length=64), nullable=False),
    sa.Column('run_started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('method', sa.String(length=128), nullable=False),
    sa.Column('before_value', sa.Float(), nullable=True),
    sa.Column('after_value', sa.Float(), nullable=True),
    sa.Column('rel_change', sa.Float(), nullable=True),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('detected_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('details', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('technique', 'impl', 'case_id', 'metric', 'hardware_key', 'software_key', 'protocol', 'run_id', name='uq_change_point')
    )
    with op.batch_alter_table('ci_change_points', schema=None) as batch_op:
        batch_op.create_index('ix_change_points_series', ['technique', 'impl', 'case_id', 'metric'], unique=False)

    op.create_table('ci_acknowledgements',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('technique', sa.String(length=128), nullable=False),
    sa.Column('impl', sa.String(length=128), nullable=False),
    sa.Column('case_id', sa.String(length=256), nullable=False),
    sa.Column('metric', sa.String(length=64), nullable=False),
    sa.Column('hardware_key', sa.String(length=16), nullable=False),
    sa.Column('software_key', sa.String(length=16), nullable=False),
    sa.Column('protocol', sa.String(length=64), nullable=False),
    sa.Column('from_run_id', sa.String(length=64), nullable=False),
    sa.Column('from_started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('change_point_id', sa.Integer(), nullable=True),
    sa.Column('who', sa.String(length=128), nullable=False),
    sa.Column('why', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['change_point_id'], ['ci_change_points.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['from_run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('ci_acknowledgements', schema=None) as batch_op:
        batch_op.create_index('ix_acks_series', ['technique', 'impl', 'case_id', 'metric'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('ci_acknowledgements', schema=None) as batch_op:
        batch_op.drop_index('ix_acks_series')

    op.drop_table('ci_acknowledgements')
    with op.batch_alter_table('ci_change_points', schema=None) as batch_op:
        batch_op.drop_index('ix_change_points_series')

    op.drop_table('ci_change_points')
    with op.batch_alter_table('ci_mutes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_ci_mutes_technique'))

    op.drop_table('ci_mutes')
    with op.batch_alter_table('ci_jobs', schema=None) as batch_op:
        batch_op.drop_index('ix_jobs_claim')

    op.drop_table('ci_jobs')
    with op.batch_alter_table('ci_gate_reports', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_ci_gate_reports_created_at'))

    op.drop_table('ci_gate_reports')
