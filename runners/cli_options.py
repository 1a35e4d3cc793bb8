"""The command-line options shared by `python -m runners` and `kwatch` commands (typer defaults)."""
import typer

TIER = typer.Option("smoke", "--tier", help="smoke | smoke_full | nightly | full")
TECH = typer.Option(None, "--technique", "-t", help="repeatable")
IMPL = typer.Option(None, "--impl", "-i", help="repeatable")
CASE = typer.Option(None, "--case", "-c", help="repeatable")
DEVICE = typer.Option("auto", "--device", help="auto | cuda | cpu")
REASON = typer.Option("manual", "--reason", help="manual | nightly | pr | ...")
TIMEOUT = typer.Option(600.0, "--timeout", help="seconds per job before it is killed")
SEED = typer.Option(None, "--seed", help="base seed (default: random, recorded)")
MEMORY = typer.Option(None, "--memory-limit", help="GiB of resident memory per job before it is killed "
                      "(default: half of this host's memory)")
REPEAT = typer.Option(1, "--repeat", min=1, help="run the selection N times back to back, one result file "
                     "each (run-to-run noise for `kwatch detect-bench --runs`)")
