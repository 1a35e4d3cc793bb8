"""Our fused decode step: five Triton launches per layer (QKV GEMV with the input RMSNorm and RoPE
fused and the K/V cache write; split-KV attention with its merge; O GEMV + residual; gate/up GEMV
with the post-attention RMSNorm and SwiGLU fused; down GEMV + residual), then the final RMSNorm
fused into the LM-head GEMV. The residual stream stays fp32 between kernels; every buffer is written
out of place, so a call is idempotent and replays as one CUDA graph. pdl=True launches each kernel
with programmatic dependent launch, so it starts (and loads its first weights) while the previous
one drains. mma_attention=True takes the tensor-core attention kernel (query group padded to 16).
Prefetch schedule (suite/lib/l2_prefetch.py): the latency-bound launches of a layer ask the L2 for
weights a later launch streams, so the DRAM is busy while they wait: pf_gu_mb = (qkv, attention,
o_proj) MB of the layer's gate/up weight, consecutive from its start (qkv's share only without pf_wo);
pf_wo: the QKV launch asks for the layer's O weight; pf_qkv_next: the down launch asks for the next
layer's QKV weight. evict="evict_first" loads weights with that L2 policy. fuse_embed: the first QKV
launch gathers the token's embedding row itself (one launch fewer). tune: per launch kind ("qkv",
"o_proj", "gate_up", "down", "head") overrides of block_k, target_programs, num_warps. max_split:
the most splits of the KV cache per head in attention. fuse_mlp: gate/up, SwiGLU and down as one
launch per layer (suite/lib/decode_mlp.py: down's partial sums added into the residual with atomics,
the O launch writing the residual there first); wd_t: the down weights transposed, (L, I, H), for it;
tune["mlp"] its rows, block_k, block_d, num_warps. early: the GEMVs' loads that do not depend on the
weights (the residual, pos) issued before them, not in the epilogue; early_kv: attention's K/V loads
issued without waiting for pos (both bit-identical; H200 A/B in docs/decode_step.md). pdl_kinds: the
launch kinds started with PDL (pdl=True: all of them): the launch before each lets it start at once
(griddepcontrol), and it loads what no earlier launch of the step writes (its first weight chunk;
attention, with attn_pre, its first tile of the cache slots before pos) before it waits. attn_warps: the
attention launch's warps ("auto": by its tile, DecodeAttention); block_s: its tile of cache slots ("split": one tile a split, decode_attention.tile_for);
attn_merge: the splits its merge reads at a time (0: all); attn_maxnreg: its register cap (None: ptxas's);
attn_part_bf16: its split partials stored in bf16 (the merge's load and registers halved); attn_patch_if:
with attn_pre, only the split holding slot pos patches it in (a branch), not every split (selects).
o_merge: attention only stores its split partials (and copies the residual forward); the O launch merges
them itself, one program per (KV head, row block), and adds its share with atomics (suite/lib/decode_o_merge.py;
tune["o_merge"]: target_programs, num_warps). The mma attention only; not with fuse_mlp.
pf_kv: L2 requests for the K/V caches, "launch:cache" with launch "qkv" (its layer's cache) or "down" (the
next layer's) and cache "k" or "v"; each replaces that launch's other prefetch.
Defaults from the H200 sweep at KV 1024 (docs/data/h200_decode_step_sweep_*.json)."""
from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from suite.lib import decode_o_merge
from suite.lib.decode_attention import DecodeAttention
from suite.lib.decode_gemv import MODE_QKV_ROPE, MODE_SWIGLU, gemv, gemv_pair
from suite.lib.decode_mlp import mlp
from suite.techniques.decode_step.reference import EPS, THETA

_SCRATCH: dict[tuple, "_Scratch"] = {}


class _Scratch:
    """fp32 buffers of one shape: residual stream (2L+1, H), q, attention out, SwiGLU out."""

    def __init__(self, L, H, hq, hkv, S, D, inter, device, pdl, block_s, mma, max_split, attn_warps, part_bf16):
        self.hs = torch.empty(2 * L + 1, H, device=device, dtype=torch.float32)
        self.q = torch.empty(hq * D, device=device, dtype=torch.float32)
        self.att = torch.empty(hq * D, device=device, dtype=torch.float32)
        self.act = torch.empty(inter, device=device, dtype=torch.float32)
        self.attn = DecodeAttention(hq, hkv, S, D, device, block_s=block_s, pdl=pdl, mma=mma, max_split=max_split,
                                    num_warps=attn_warps,
                                    part_dtype=torch.bfloat16 if part_bf16 else torch.float32)


def steps(out, emb, wqkv, wo, wgu, wd, ln1, ln2, lnf, k_cache, v_cache, token, pos,
          pdl: bool = False, block_k: int = 1024, block_s: int | None = None, target_programs: int = 528,
          num_warps: int = 4, mma_attention: bool = False, pf_gu_mb: tuple = (0, 0, 0), pf_wo: bool = False,
          pf_qkv_next: bool = False, pf_policy: int = 1, evict: str = "", fuse_embed: bool = False,
          tune: dict | None = None, max_split: int = 64, fuse_mlp: bool = False,
          wd_t=None, early: bool = True, early_kv: bool = False, pdl_kinds: tuple = (),
          attn_pre: bool = True, attn_warps: int | str = 4, attn_merge: int = 0,
          attn_maxnreg: int | None = None, pf_kv: tuple = (),
          attn_part_bf16: bool = False, attn_patch_if: bool = False,
          o_merge: bool = False) -> list[tuple[str, Callable[[], None]]]:
    """The step's launches in order as (kind, call): embed, then per layer qkv, attention, o_proj,
    gate_up, down (or, fused, mlp), then head (run() calls them all; sweep.py also times each kind alone)."""
    if pdl_kinds and emb.is_cuda and torch.cuda.get_device_capability(emb.device)[0] < 9:
        pdl_kinds = ()  # griddepcontrol is sm90's: elsewhere every launch waits for the one before
    L, H = wqkv.shape[0], emb.shape[1]
    hkv, S, D = k_cache.shape[1:]
    hq, inter = wo.shape[-1] // D, wgu.shape[1] // 2
    key = (L, H, hq, hkv, S, D, inter, str(emb.device), pdl, block_s, mma_attention, max_split, attn_warps,
           attn_part_bf16)
    sc = _SCRATCH.get(key)
    if sc is None:
        sc = _SCRATCH[key] = _Scratch(L, H, hq, hkv, S, D, inter, emb.device, pdl, block_s, mma_attention,
                                      max_split, attn_warps, attn_part_bf16)
    hs = sc.hs
    opts = {"block_k": block_k, "pdl": pdl, "target_programs": target_programs, "num_warps": num_warps,
            "pf_policy": pf_policy, "evict": evict, "early": early}
    kind_opts = {k: {**opts, **(tune or {}).get(k, {})} for k in ("qkv", "o_proj", "gate_up", "down", "head")}
    nxt = {"qkv": "attention", "attention": "o_proj", "o_proj": "mlp" if fuse_mlp else "gate_up", "gate_up": "down"}
    for k, o in kind_opts.items():  # only the named kinds start early; the launch before each lets them
        o["pdl"] = pdl or k in pdl_kinds
        o["trig"] = not pdl and nxt.get(k) in pdl_kinds
    a_pdl = pdl or "attention" in pdl_kinds
    attn_opts = {"pdl": a_pdl, "trig": not pdl and "o_proj" in pdl_kinds,
                 "pre": attn_pre and mma_attention and a_pdl and not pdl, "merge": attn_merge,
                 "maxnreg": attn_maxnreg, "patch_if": attn_patch_if}
    down_trig = {last: not pdl and nk in pdl_kinds for last, nk in ((False, "qkv"), (True, "head"))}
    mlp_opts = {"evict": evict, **(tune or {}).get("mlp", {})}
    out_steps = [] if fuse_embed else [("embed", lambda: hs[0].copy_(emb.index_select(0, token)[0]))]
    kv_pf = _kv_prefetch(pf_kv, k_cache, v_cache)
    if o_merge:
        assert mma_attention and not fuse_mlp, "o_merge: the tensor-core attention, O as its own launch"
        om_opts = {"pdl": kind_opts["o_proj"]["pdl"], "trig": kind_opts["o_proj"]["trig"],
                   **(tune or {}).get("o_merge", {})}
    for l in range(L):
        kv_q = kv_pf["qkv"][l].view(-1) if "qkv" in kv_pf else None
        kv_d = kv_pf["down"][l + 1].view(-1) if "down" in kv_pf and l + 1 < L else None
        gu = _ranges(wgu[l].view(-1), [0, *pf_gu_mb[1:]] if pf_wo else list(pf_gu_mb))
        first = fuse_embed and l == 0
        out_steps += [
            ("qkv", partial(gemv_pair, sc.q, wqkv[l], emb if first else hs[2 * l], ln1[l], MODE_QKV_ROPE,
                            kc=k_cache[l], vc=v_cache[l], pos=pos, heads=(hq, hkv), head_dim=D, eps=EPS,
                            theta=THETA, pf=kv_q if kv_q is not None else wo[l].view(-1) if pf_wo else gu[0],
                            tok=token if first else None,
                            x_out=hs[0] if first else None, **kind_opts["qkv"])),
            ("attention", partial(sc.attn, sc.att, sc.q, k_cache[l], v_cache[l], pos, pf=gu[1], pf_policy=pf_policy,
                                  early=early_kv, defer=(hs[2 * l], hs[2 * l + 1]) if o_merge else None,
                                  **attn_opts)),
            ("o_proj", partial(decode_o_merge.o_merge, hs[2 * l + 1], wo[l], sc.attn, **om_opts) if o_merge
             else partial(gemv, hs[2 * l + 1], wo[l], sc.att, res=hs[2 * l], pf=gu[2],
                          out2=hs[2 * l + 2] if fuse_mlp else None, **kind_opts["o_proj"])),
        ]
        if fuse_mlp:
            wdl = wd_t[l] if wd_t is not None else wd[l]
            out_steps.append(("mlp", partial(mlp, hs[2 * l + 2], wgu[l], hs[2 * l + 1], ln2[l], wdl,
                                             transposed=wd_t is not None, eps=EPS, **mlp_opts)))
            continue
        out_steps += [
            ("gate_up", partial(gemv_pair, sc.act, wgu[l], hs[2 * l + 1], ln2[l], MODE_SWIGLU, eps=EPS,
                                 **kind_opts["gate_up"])),
            ("down", partial(gemv, hs[2 * l + 2], wd[l], sc.act, res=hs[2 * l + 1],
                             pf=kv_d if kv_d is not None else wqkv[l + 1].view(-1) if pf_qkv_next and l + 1 < L else None,
                             **{**kind_opts["down"], "trig": down_trig[l + 1 == L]})),
        ]
    return out_steps + [("head", partial(gemv, out, emb, hs[2 * L], gain=lnf, eps=EPS, **kind_opts["head"]))]


def _kv_prefetch(pf_kv: tuple, k_cache, v_cache) -> dict:
    """{"qkv" or "down": the (L, Hkv, S, D) cache that launch asks the L2 for} from entries "launch:cache"."""
    caches, out = {"k": k_cache, "v": v_cache}, {}
    for entry in pf_kv:
        launch, _, cache = entry.partition(":")
        if launch not in ("qkv", "down") or cache not in caches or launch in out:
            raise ValueError(f"pf_kv entry {entry!r}: want one 'qkv:k|v' and one 'down:k|v' at most")
        out[launch] = caches[cache]
    return out


def _ranges(w, mbs) -> list:
    """Consecutive slices of the flat bf16 tensor w, mbs[i] MB each (None where 0), in whole lines."""
    out, at = [], 0
    for mb in mbs:
        n = min(int(mb * 1e6 / 2) // 64 * 64, w.numel() - at)
        out.append(w[at:at + n] if n > 0 else None)
        at += max(n, 0)
    return out


def run(out, **inputs_and_args) -> None:
    """out (V,) fp32 <- logits of one decode step (weights bf16 as reference.make_inputs makes them);
    writes the new K/V into k_cache, v_cache (L, Hkv, S, D) bf16 at slot pos. Args: see steps()."""
    for _, call in steps(out, **inputs_and_args):
        call()
