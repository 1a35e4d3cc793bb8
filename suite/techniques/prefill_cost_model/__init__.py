"""The page's prefill-share cost model (section "#5 · Example") and its measured check.

Not a runner technique: `common.attn_cost` is the model; `runners/studies/prefill_cost.py` times
dense vs 10%-sparse prefill attention (and decode) per workload on a GPU and writes a result file."""
