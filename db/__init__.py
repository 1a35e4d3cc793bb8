"""KernelWatch database: SQLAlchemy 2.0 models, Alembic migrations, ingest and queries."""
