"""results.samples_f64: the raw samples as float64 little-endian bytes, backfilled from the JSON list

The verdict pages read millions of pooled samples; as JSON text they were decoded into Python floats
(most of a 33-run Compare's time), as bytes they are one numpy.frombuffer. The JSON list stays (the
gate, Trends and run documents read it); ingest writes both. A null sample is stored as NaN
(db.samples). Downgrade drops the column.

Revision ID: 0006
Revises: 0005
"""
from alembic import op
import sqlalchemy as sa

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

BATCH = 5000


def upgrade() -> None:
    from db.samples import pack_json

    with op.batch_alter_table('results', schema=None) as batch_op:
        batch_op.add_column(sa.Column('samples_f64', sa.LargeBinary(), nullable=True))
    conn = op.get_bind()
    # the JSON as text on both backends (a jsonb column would otherwise come back decoded, slower)
    as_text = "CAST(samples AS TEXT)" if conn.dialect.name == "postgresql" else "samples"
    update = sa.text("UPDATE results SET samples_f64 = :blob WHERE id = :id").bindparams(
        sa.bindparam("blob", type_=sa.LargeBinary()))
    last = -1
    while True:
        rows = conn.execute(sa.text(f"SELECT id, {as_text} FROM results WHERE id > :last ORDER BY id LIMIT {BATCH}"),
                            {"last": last}).all()
        if not rows:
            break
        conn.execute(update, [{"id": i, "blob": pack_json(s)} for i, s in rows])
        last = rows[-1][0]


def downgrade() -> None:
    with op.batch_alter_table('results', schema=None) as batch_op:
        batch_op.drop_column('samples_f64')
