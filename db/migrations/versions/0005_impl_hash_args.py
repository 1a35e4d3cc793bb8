"""impl_hash covers the implementation's args: stored hashes re-keyed as today's writer makes them

Two variants of one kernel (triton_bf16x9 and triton_bf16x3 run one target with other args) shared
a hash; runners.code_hash.with_args(stored hash, args) gives each its own. The mapping is a function
of the stored hash, so rows of one code version keep one hash and a series shows no version change
at this step. Args are today's (the registry at upgrade time). Runs ingested later are re-keyed at
ingest (runners.code_hash.rekey_doc). Not reversed on downgrade (the hash is no key).

Revision ID: 0005
Revises: 0004
"""
from alembic import op
import sqlalchemy as sa

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    stored = conn.execute(sa.text(
        "SELECT DISTINCT b.id, b.technique, b.impl, r.impl_hash FROM results r "
        "JOIN benchmarks b ON r.benchmark_id = b.id WHERE r.impl_hash IS NOT NULL")).all()
    if not stored:
        return
    from suite.record import registry_args, with_args  # the registry imports every technique folder

    args: dict[tuple[str, str], dict | None] = {}
    for bench_id, technique, impl, old in stored:
        if (technique, impl) not in args:
            args[(technique, impl)] = registry_args(technique, impl)
        if args[(technique, impl)]:
            conn.execute(sa.text("UPDATE results SET impl_hash = :new WHERE benchmark_id = :b AND impl_hash = :old"),
                         {"new": with_args(old, args[(technique, impl)]), "b": bench_id, "old": old})


def downgrade() -> None:
    pass
