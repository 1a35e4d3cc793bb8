"""The L2 prefetch hint compiles for sm_90 on a CPU-only machine (Triton's bundled ptxas, in a process
without TRITON_INTERPRET): the GEMV and decode attention kernels carry prefetch requests exactly when
asked, with the asked policy, and the weight loads the asked eviction policy; the persistent step
compiles with its grid barriers (release/acquire atomics at GPU scope); under the interpreter, or
without a tensor, the hint is off."""
import json
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")  # kernels imported here run under the interpreter elsewhere

import pytest  # noqa: E402
import torch  # noqa: E402

from suite.lib.l2_prefetch import PF_EVICT_LAST, PF_OFF, prefetch_args  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
import json, triton
from triton.backends.compiler import GPUTarget
from suite.lib import decode_attention as A, decode_gemv as G

def ptx(fn, sig, const, div=()):
    attrs = {(i,): [["tt.divisibility", 16]] for i in div}  # as a launch specialises 16-aligned arguments
    src = triton.compiler.ASTSource(fn=fn, signature={**sig, **{k: "constexpr" for k in const}}, constexprs=const,
                                    attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32)).asm["ptx"]

def marks(text):
    return [n for n in ("prefetch.global.L2::evict_last", "prefetch.global.L2 ", "L1::evict_first") if n in text]

sig = {"w_ptr": "*bf16", "x_ptr": "*fp32", "g_ptr": "*bf16", "res_ptr": "*fp32", "out_ptr": "*fp32",
       "out2_ptr": "*fp32", "N": "i32", "eps": "fp32", "pf_ptr": "*bf16", "pf_lines": "i32"}
out = {}
for pf, evict in [(0, ""), (1, "evict_first"), (2, "")]:
    out[f"gemv/{pf}/{evict}"] = marks(ptx(G.gemv_kernel, sig, {"K": 2048, "NORM": True, "RES": True, "BLOCK_N": 4,
                                      "BLOCK_K": 1024, "PDL": False, "PF": pf, "EVICT": evict,
                                      "DUP": False, "EARLY": False}))
sig = {"q_ptr": "*fp32", "kc_ptr": "*bf16", "vc_ptr": "*bf16", "pos_ptr": "*i64", "part_o": "*fp32",
       "part_ml": "*fp32", "count_ptr": "*i32", "out_ptr": "*fp32", "S": "i32", "qk_scale": "fp32",
       "pf_ptr": "*bf16", "pf_lines": "i32"}
out["attention"] = marks(ptx(A.decode_attn_mma_kernel, sig, {"G": 4, "D": 64, "CHUNK": 64, "BLOCK_S": 64,
                                                             "NSPLIT": 16, "PDL": False, "UPCAST": False, "PF": 1,
                                                             "EARLY": False}))
lines = ptx(A.decode_attn_mma_kernel, sig, {"G": 4, "D": 64, "CHUNK": 64, "BLOCK_S": 64, "NSPLIT": 16, "PDL": True,
                                           "UPCAST": False, "PF": 0, "EARLY": False, "PRE": True, "TRIG": True},
            div=(0, 1, 2, 3, 4, 5, 6, 7, 8)).splitlines()
at = lambda key: [i for i, l in enumerate(lines) if key in l]
out["attention_pre"] = {"trig": at("griddepcontrol.launch_dependents"), "wait": at("griddepcontrol.wait"),
                        "v4": at("ld.global.v4")}
from suite.lib.decode_persistent import decode_persistent_kernel
sig = {n: "*bf16" for n in ("emb", "wqkv", "wo", "wgu", "wd", "ln1", "ln2", "lnf", "kc", "vc")}
sig.update({n: "*fp32" for n in ("logits", "hs", "q", "att", "act", "part_o", "part_ml")})
sig.update(tok_ptr="*i64", pos_ptr="*i64", count="*i32", bar="*i32", eps="fp32", log2_theta="fp32",
           qk_scale="fp32", **{n: "i32" for n in ("S", "L", "layer", "gu_lines", "wd_lines", "head_lines")})
const = dict(H=64, HQ=4, HKV=2, D=16, INTER=128, NPROG=4, BN_QKV=4, BN_O=4, BN_GU=8, BN_D=4, BN_HEAD=16,
             NBLK_QKV=16, NBLK_O=16, NBLK_GU=16, NBLK_D=16, NBLK_HEAD=16, BLOCK_K=64, CHUNK=64, BLOCK_S=64,
             NSPLIT=1, UPCAST=False, EVICT="", PF=1, STAGE=-1)
text = ptx(decode_persistent_kernel, sig, const)
out["persistent"] = marks(text) + [n for n in ("atom.global.gpu.acq_rel.add", "ld.global.gpu.acquire")
                                   if n in text]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def marks():
    import triton

    if not os.path.exists(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")):
        pytest.skip("Triton's bundled ptxas is missing")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_gemv_carries_prefetch_requests_only_when_asked(marks):
    assert marks["gemv/0/"] == []
    assert marks["gemv/1/evict_first"] == ["prefetch.global.L2::evict_last", "L1::evict_first"]
    assert marks["gemv/2/"] == ["prefetch.global.L2 "]


def test_attention_carries_prefetch_requests(marks):
    assert marks["attention"] == ["prefetch.global.L2::evict_last"]


def test_attention_started_early_loads_its_first_tile_before_it_waits(marks):
    """PRE + TRIG (per-kind PDL): the next launch is let go first, then the split's K and V tile (16 KB in
    16-byte loads: 8 a thread) is loaded, then the kernel waits for the QKV launch; q and slot pos after."""
    a = marks["attention_pre"]
    assert len(a["trig"]) == 1 and len(a["wait"]) == 1
    before = [i for i in a["v4"] if a["trig"][0] < i < a["wait"][0]]
    assert len(before) == 8
    assert any(i > a["wait"][0] for i in a["v4"])


def test_persistent_step_has_grid_barriers_and_prefetches(marks):
    # arrival: an acq_rel add; polling: acquire loads (Triton lowers an add of 0 to one)
    assert marks["persistent"] == ["prefetch.global.L2::evict_last", "atom.global.gpu.acq_rel.add",
                                   "ld.global.gpu.acquire"]


def test_prefetch_args_are_off_under_the_interpreter_or_without_a_tensor(monkeypatch):
    w = torch.zeros(1000, dtype=torch.bfloat16)
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    assert prefetch_args(w)[1:] == (16, PF_EVICT_LAST)  # 2000 bytes: 16 lines of 128
    assert prefetch_args(None)[2] == PF_OFF
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert prefetch_args(w)[2] == PF_OFF
