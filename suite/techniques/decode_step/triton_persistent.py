"""Our decode step as one persistent launch walking the layers (suite/lib/decode_persistent.py):
the same fused stages as triton_step (attention on tensor cores), grid barriers instead of kernel
boundaries, each program asking the L2 for the next stage's weights before it waits. Options:
programs_per_sm, num_warps, block_k, gu_mb / wd_mb / head_mb (prefetched MB), prefetch, rows."""
from suite.lib.decode_persistent import PersistentDecode
from suite.techniques.decode_step.plans import plan_and_run

plan, run = plan_and_run(PersistentDecode)
