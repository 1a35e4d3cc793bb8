"""Our decode step as one launch of work items with dependency counters (suite/lib/decode_dataflow.py):
the same fused stages as triton_step (attention on tensor cores), each GEMV item loading its weights
before it waits on the previous stage. Options: num_warps, rows, block_k, ticket, max_split, evict."""
from suite.lib.decode_dataflow import DataflowDecode
from suite.techniques.decode_step.plans import plan_and_run

plan, run = plan_and_run(DataflowDecode)
