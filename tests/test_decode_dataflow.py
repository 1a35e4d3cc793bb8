"""The one-launch work-item decode step (suite/lib/decode_dataflow.py) on the CPU, under the interpreter:
bit-identical to the per-launch fused step (logits and both caches), with tickets or launch order and
with several item sizes, its counters back at zero after every call, and greedy tokens as the oracle's."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from runners.correctness import rel_err  # noqa: E402
from suite.techniques.decode_step import TINY  # noqa: E402
from suite.techniques.decode_step import reference as R  # noqa: E402
from suite.techniques.decode_step.probe import greedy  # noqa: E402
from suite.techniques.decode_step.triton_dataflow import plan  # noqa: E402
from suite.techniques.decode_step.triton_dataflow import run as dataflow  # noqa: E402
from suite.techniques.decode_step.triton_step import run as fused  # noqa: E402


@pytest.mark.parametrize("kv,opts", [
    (48, {}),
    (200, {"ticket": False, "head_launch": True}),
    (48, {"front_only": True}),
    (80, {"rows": {"QKV": 2, "O": 2, "GU": 8, "D": 1, "HEAD": 16}, "block_k": {"D": 32}}),
])
def test_dataflow_step_is_the_fused_step_and_leaves_its_counters_at_zero(kv, opts):
    p = {**TINY, "kv": kv}
    ours, base = R.make_inputs(p, 6, "cpu"), R.make_inputs(p, 6, "cpu")
    want = torch.full((p["vocab"],), float("nan"))
    fused(want, **base, mma_attention=True)
    pl = plan(ours["emb"], ours["wqkv"], ours["wo"], ours["wgu"], ours["k_cache"], **opts)
    for _ in range(2):  # a replay starts from the counters the last call left
        out = torch.full((p["vocab"],), float("nan"))
        dataflow(out, **ours, **opts)
        if "block_k" in opts:  # other K chunks: the same sums in another order
            assert rel_err(out, want) < 1e-5
        else:
            assert torch.equal(out, want)
        assert torch.equal(ours["k_cache"], base["k_cache"]) and torch.equal(ours["v_cache"], base["v_cache"])
        assert pl.sync.eq(0).all() and pl.count.eq(0).all() and pl.gave_up() == 0
    # more items than programs of one kind: several blocks per stage, splits per head
    assert pl.items["GU"] > 1 and pl.items["ATTN"] == p["kv_heads"] * pl.nsplit


def test_dataflow_greedy_tokens_agree_with_the_oracle():
    g = greedy(dataflow, {**TINY, "kv": 48}, seed=3, device="cpu", steps=3)
    assert g["matches"] == g["steps"] == 3 and g["first_mismatch"] is None


SCRIPT = """
import json, triton
from triton.backends.compiler import GPUTarget
from suite.lib.decode_dataflow import BLOCK_K, ROWS, decode_dataflow_kernel
from suite.lib.ptxas import usage

sig = {n: "*bf16" for n in ("emb", "wqkv", "wo", "wgu", "wd", "ln1", "ln2", "lnf", "kc", "vc")}
sig.update({n: "*fp32" for n in ("logits", "hs", "q", "att", "act", "part_o", "part_ml")})
sig.update(tok_ptr="*i64", pos_ptr="*i64", count="*i32", sync="*i32", eps="fp32", log2_theta="fp32",
           qk_scale="fp32", S="i32", t0="i32")
const = dict(L=16, H=2048, HQ=32, HKV=8, D=64, INTER=8192, **{f"BN_{k}": v for k, v in ROWS.items()},
             **{f"BK_{k}": v for k, v in BLOCK_K.items()}, CHUNK=64, BLOCK_S=64, NSPLIT=16, UPCAST=False,
             EVICT="", NSYNC=128, TICKET=True, WAIT=3, SUB=False)
fn = decode_dataflow_kernel
attrs = {(fn.arg_names.index(k),): [["tt.divisibility", 16]] for k, v in sig.items() if v.startswith("*")}
src = triton.compiler.ASTSource(fn=fn, signature={**sig, **{k: "constexpr" for k in const}}, constexprs=const,
                                attrs=attrs)
ptx = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}).asm["ptx"]
before = ptx[:ptx.index("ld.global.gpu.acquire")]
print(json.dumps({"regs": usage(ptx)[0], "weights_before_poll": before.count("ld.global.v4.b32"),
                  "release": "atom.global.gpu.release.add" in ptx, "l2": ptx.count("prefetch.global.L2")}))
"""


def test_dataflow_kernel_loads_weights_before_its_first_wait_and_fits_four_programs_per_sm():
    import json
    import subprocess
    import sys
    from pathlib import Path

    import triton

    if not os.path.exists(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")):
        pytest.skip("Triton's bundled ptxas is missing")
    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(root)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=root,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    # the head item's first 8 x 512 bf16 chunk: 4 loads of 16 bytes per thread, issued before the acquire poll
    assert got["weights_before_poll"] >= 4
    assert got["release"] and got["l2"] >= 5  # the rest of down's, gate/up's, the head's columns; K and V
    assert got["regs"] <= 128  # 4 programs of 4 warps per SM
