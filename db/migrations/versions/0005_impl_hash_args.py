"""impl_hash covers the implementation's args (no longer a data step: rows keep what they recorded)

Two variants of one kernel (triton_bf16x9 and triton_bf16x3 run one target with other args) shared
a hash; runners.code_hash.with_args(stored hash, args) gives each its own. The mapping is a function
of the stored hash, so rows of one code version keep one hash and a series shows no version change
at this step. It used today's args (the registry at upgrade time); it re-keys nothing now: a run written
before the scheme keeps its recorded hashes, so its arg-ful series start again at the scheme.

Revision ID: 0005
Revises: 0004
"""
revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Nothing since the hash scheme's records: a stored row keeps the hash it recorded. This step once
    re-keyed pre-scheme rows by the registry at upgrade time, which need not hold the args they ran with;
    a database upgraded through it then keeps those hashes (new runs are unaffected)."""


def downgrade() -> None:
    pass
