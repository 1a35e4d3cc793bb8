"""Entry point for `python -m runners` on hosts without the database stack."""
from runners.cli import app

app()
