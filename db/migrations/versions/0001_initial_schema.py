"""initial schema

Revision ID: 0001
Revises: 
Create Date: 2026-11-29 19:26:56.478574
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('benchmarks',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('technique', sa.String(length=128), nullable=False),
    sa.Column('impl', sa.String(length=128), nullable=False),
    sa.Column('case_id', sa.String(length=256), nullable=False),
    sa.Column('params', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('technique', 'impl', 'case_id', name='uq_benchmark')
    )
    with op.batch_alter_table('benchmarks', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_benchmarks_technique'), ['technique'], unique=False)

    op.create_table('environments',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('fingerprint', sa.String(length=64), nullable=False),
    sa.Column('hardware_key', sa.String(length=16), nullable=False),
    sa.Column('software_key', sa.String(length=16), nullable=False),
    sa.Column('device', sa.String(length=16), nullable=False),
    sa.Column('gpu_name', sa.String(length=128), nullable=True),
    sa.Column('compute_capability', sa.String(length=16), nullable=True),
    sa.Column('driver', sa.String(length=64), nullable=True),
    sa.Column('cuda', sa.String(length=32), nullable=True),
    sa.Column('torch', sa.String(length=64), nullable=True),
    sa.Column('triton', sa.String(length=64), nullable=True),
    sa.Column('python', sa.String(length=32), nullable=True),
    sa.Column('cpu', sa.String(length=256), nullable=True),
    sa.Column('raw', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('fingerprint')
    )
    with op.batch_alter_table('environments', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_environments_hardware_key'), ['hardware_key'], unique=False)
        batch_op.create_index(batch_op.f('ix_environments_software_key'), ['software_key'], unique=False)

    op.create_table('runs',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('tier', sa.String(length=32), nullable=False),
    sa.Column('reason', sa.String(length=64), nullable=False),
    sa.Column('source', sa.String(length=32), nullable=False),
    sa.Column('git_commit', sa.String(length=64), nullable=True),
    sa.Column('git_branch', sa.String(length=256), nullable=True),
    sa.Column('git_dirty', sa.Boolean(), nullable=True),
    sa.Column('environment_id', sa.Integer(), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('config', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('ingested_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['environment_id'], ['environments.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_runs_environment_id'), ['environment_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_runs_git_commit'), ['git_commit'], unique=False)
        batch_op.create_index(batch_op.f('ix_runs_started_at'), ['started_at'], unique=False)

    op.create_table('results',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.String(length=64), nullable=False),
    sa.Column('benchmark_id', sa.Integer(), nullable=False),
    sa.Column('metric', sa.String(length=64), nullable=False),
    sa.Column('unit', sa.String(length=32), nullable=False),
    sa.Column('direction', sa.String(length=8), nullable=False),
    sa.Column('value', sa.Float(), nullable=True),
    sa.Column('status', sa.String(length=32), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('impl_version', sa.Integer(), nullable=True),
    sa.Column('impl_hash', sa.String(length=64), nullable=True),
    sa.Column('protocol', sa.String(length=64), nullable=True),
    sa.Column('params', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('samples', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('stats', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.ForeignKeyConstraint(['benchmark_id'], ['benchmarks.id'], ),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('results', schema=None) as batch_op:
        batch_op.create_index('ix_results_run', ['run_id', 'status'], unique=False)
        batch_op.create_index('ix_results_series', ['benchmark_id', 'metric', 'run_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('results', schema=None) as batch_op:
        batch_op.drop_index('ix_results_series')
        batch_op.drop_index('ix_results_run')

    op.drop_table('results')
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_runs_started_at'))
        batch_op.drop_index(batch_op.f('ix_runs_git_commit'))
        batch_op.drop_index(batch_op.f('ix_runs_environment_id'))

    op.drop_table('runs')
    with op.batch_alter_table('environments', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_environments_software_key'))
        batch_op.drop_index(batch_op.f('ix_environments_hardware_key'))

    op.drop_table('environments')
    with op.batch_alter_table('benchmarks', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_benchmarks_technique'))

    op.drop_table('benchmarks')
