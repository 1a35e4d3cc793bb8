"""The configurations the decode-step sweep times (runners/studies/decode_step_sweep.py): the default
CONFIGS and MORE, and each named set (`--name`) in SETS, each a tuple of triton_step / persistent /
dataflow keyword options; the comment beside each set says what it asked and the docs/data file its
H200 run wrote."""
from __future__ import annotations

_MMA = {"mma_attention": True}
_P = {"persistent": True}
_FE = {**_MMA, "fuse_embed": True}
_PF = {**_FE, "pf_wo": True, "pf_gu_mb": (0, 12, 8)}
CONFIGS = (
    _MMA, _FE, {**_FE, "pf_wo": True}, _PF,
    _P, {**_P, "programs_per_sm": 1, "num_warps": 8}, {**_P, "prefetch": False}, {**_P, "gu_mb": 32, "wd_mb": 24},
    {**_P, "rows": {"QKV": 8, "O": 8, "GU": 16, "D": 8}}, {**_P, "programs_per_sm": 3},
    {**_PF, "evict": "evict_first"}, {**_PF, "pf_qkv_next": True},
    {**_FE, "pf_wo": True, "pf_gu_mb": (0, 24, 12)}, {**_FE, "pf_gu_mb": (8, 16, 8)}, {**_PF, "pf_policy": 2},
    {**_FE, "pf_wo": True, "pf_gu_mb": (0, 24, 12), "evict": "evict_first", "pf_qkv_next": True},
    {**_PF, "pdl": True}, {**_PF, "target_programs": 264}, {**_FE, "pf_wo": True, "pf_gu_mb": (0, 32, 16)},
    {**_PF, "pdl": True, "target_programs": 132}, {**_PF, "pdl": True, "target_programs": 264},
    {**_FE, "pf_wo": True, "pf_gu_mb": (0, 24, 12), "evict": "evict_first", "pf_qkv_next": True, "pdl": True},
    *({**_PF, "tune": {kind: t}} for kind, ts in (
        ("gate_up", ({"num_warps": 8}, {"block_k": 512}, {"target_programs": 264}, {"target_programs": 1056})),
        ("down", ({"block_k": 2048}, {"block_k": 512}, {"num_warps": 8}, {"target_programs": 264},
                  {"target_programs": 1056})),
        ("qkv", ({"target_programs": 264}, {"target_programs": 1056}, {"block_k": 512}, {"num_warps": 8})),
        ("o_proj", ({"target_programs": 264}, {"target_programs": 1056}, {"block_k": 512}, {"num_warps": 8})),
        ("head", ({"num_warps": 8}, {"block_k": 2048})),
    ) for t in ts),
)

_T = {**_FE, "tune": {"down": {"block_k": 2048}}}
FINAL = (  # after the nightly at the same commit: around the tuned step
    _T, {**_T, "max_split": 8}, {**_T, "max_split": 4}, {**_T, "max_split": 32},
    {**_T, "tune": {"down": {"block_k": 2048}, "qkv": {"target_programs": 1056}, "head": {"num_warps": 8}}},
    {**_T, "tune": {"down": {"block_k": 2048}, "gate_up": {"block_k": 512}}},
    {**_T, "tune": {"down": {"block_k": 2048, "target_programs": 264}}},
    {**_T, "tune": {"down": {"block_k": 4096}}},
)
_WIDE = {**_FE, "pf_wo": True, "pf_gu_mb": (0, 24, 12), "evict": "evict_first", "pf_qkv_next": True}
MORE = (_MMA, _PF, {**_PF, "evict": "evict_first"}, _WIDE, _P)  # again at each --more-kv
_DF = {"dataflow": True}
_R1 = {"rows": {"QKV": 4, "O": 4, "GU": 4, "D": 2, "HEAD": 4}, "block_k": {"QKV": 2048, "O": 2048, "GU": 2048,
                                                                       "D": 2048, "HEAD": 2048}}
_FR = {**_DF, "front_only": True}
_FT = {**_FR, "ticket": False}
DATAFLOW = (  # --dataflow: the one-launch work-item step (suite/lib/decode_dataflow.py) and its per-layer
    # front (QKV, attention, O as one launch; gate/up, down, head per launch), in launch order (no tickets)
    _T, _FT, {**_FT, "rows": {"O": 8}}, {**_FT, "rows": {"O": 8}, "block_k": {"O": 1024}},
    {**_FT, "rows": {"O": 16}, "block_k": {"O": 512}},
    {**_FT, "rows": {"QKV": 8, "O": 8}, "block_k": {"QKV": 1024, "O": 1024}}, {**_FT, "ask_l2": True}, _FR,
)
DATAFLOW_MORE = DATAFLOW[:2] + DATAFLOW[3:4] + DATAFLOW[6:7]
_M = {**_T, "fuse_mlp": True}
_MT = {**_M, "wd_t": True}  # the down weights transposed once, (L, I, H), outside the timing
MLP = (  # --mlp: gate/up, SwiGLU and down as one launch per layer (suite/lib/decode_mlp.py)
    _T, _MT, _M, {**_M, "tune": {"mlp": {"rows": 32}}},
    *({**_MT, "tune": {"mlp": t}} for t in (
        {"rows": 8}, {"rows": 32}, {"block_d": 1024}, {"num_warps": 8}, {"block_k": 2048}, {"block_k": 512},
        {"rows": 8, "block_k": 2048}, {"rows": 32, "block_k": 2048}, {"rows": 32, "block_k": 2048, "num_warps": 8})),
)
_NE = {**_T, "early": False}
_EK = {**_T, "early_kv": True}
EARLY = (_NE, _T, _EK, _NE, _T, _EK)  # --early: A/B/C of early loads (none, the GEMVs', + attention's), alternated
_D2 = {"down": {"block_k": 2048}}
RETUNE = (  # --retune: per-kind programs and chunks again around the tuned step, now with the early loads
    _T, *({**_T, "tune": {**_D2, **t}} for t in (
        {"o_proj": {"target_programs": 264}}, {"o_proj": {"target_programs": 1056}},
        {"o_proj": {"block_k": 2048}}, {"qkv": {"target_programs": 264}}, {"qkv": {"target_programs": 1056}},
        {"qkv": {"block_k": 2048}}, {"gate_up": {"target_programs": 264}}, {"gate_up": {"target_programs": 1056}},
        {"gate_up": {"block_k": 2048}}, {"down": {"block_k": 2048, "target_programs": 264}},
        {"down": {"block_k": 2048, "target_programs": 1056}}, {"head": {"num_warps": 8}})), _T,
)
_O2 = {**_T, "tune": {**_D2, "o_proj": {"block_k": 2048}}}
O_AB = (_T, _O2) * 3  # --o-ab: the retune's best (O in one 2048-column chunk) against the tuned step, alternated
_ALL = ("qkv", "attention", "o_proj", "gate_up", "down", "head")
PDL_KINDS = (  # --pdl-kinds: programmatic dependent launch for some launch kinds only, around the tuned step
    _O2, *({**_O2, "pdl_kinds": k} for k in (("attention",), ("attention", "o_proj"), ("o_proj",),
                                             ("attention", "o_proj", "gate_up"), ("qkv", "attention", "o_proj"),
                                             _ALL)),
    {**_O2, "pdl_kinds": ("attention",), "attn_pre": False}, _O2, {**_O2, "pdl_kinds": ("attention", "o_proj")},
)
_PA = {**_O2, "pdl_kinds": _ALL}
_NO_ATT = tuple(k for k in _ALL if k != "attention")
PDL_AB = (  # --pdl-ab: every kind started early against the tuned step, alternated, then what each part adds
    *(_O2, _PA) * 3, {**_PA, "attn_pre": False}, {**_O2, "pdl_kinds": _NO_ATT}, {**_O2, "pdl": True},
    {**_O2, "pdl_kinds": ("o_proj", "gate_up", "down", "head")}, {**_O2, "pdl_kinds": ("gate_up", "down", "qkv")},
    {**_O2, "pdl_kinds": ("qkv", "o_proj", "gate_up", "down", "head")}, {**_PA, "max_split": 32}, _O2, _PA,
)
PDL_AB_MORE = ((_O2, _PA) * 2 + ({**_O2, "pdl_kinds": ("o_proj",)}, {**_O2, "pdl_kinds": _NO_ATT},
                                 {**_PA, "attn_pre": False}))
_PT = {"down": {"block_k": 2048}, "o_proj": {"block_k": 2048}}
PDL_RETUNE = (  # --pdl-retune: chunks, programs and splits again with every launch started early
    _PA, *({**_PA, "tune": {**_PT, **t}} for t in (
        {"gate_up": {"block_k": 2048}}, {"qkv": {"block_k": 2048}}, {"gate_up": {"target_programs": 264}},
        {"down": {"block_k": 2048, "target_programs": 264}}, {"qkv": {"target_programs": 264}},
        {"o_proj": {"block_k": 2048, "target_programs": 264}},
        {k: {**_PT.get(k, {}), "target_programs": 264} for k in ("qkv", "o_proj", "gate_up", "down")},
        {"down": {"block_k": 1024}}, {"down": {"block_k": 4096}}, {"head": {"block_k": 2048}})),
    _PA, {**_PA, "max_split": 16}, {**_PA, "block_s": 128}, {**_PA, "block_s": 32}, _PA,
)
PDL_RETUNE_MORE = (_PA, {**_PA, "attn_pre": False}, {**_PA, "max_split": 32}, {**_PA, "max_split": 16},
                   {**_PA, "block_s": 128}, {**_PA, "block_s": 128, "attn_pre": False}, _PA)
_P2 = {**_PA, "tune": {**_PT, "qkv": {"block_k": 2048}}}
_P3 = {**_PA, "tune": {**_PT, "qkv": {"block_k": 2048}, "o_proj": {"block_k": 2048, "target_programs": 264}}}
PDL_TILES = (  # --pdl-tiles: the retune's gains together (QKV in one chunk, O on 264 programs, one tile a split)
    _PA, _P2, _P3, {**_P3, "block_s": 32}, {**_P3, "block_s": "split"}, {**_P3, "block_s": "split", "max_split": 32},
    {**_P2, "block_s": "split"}, _PA, {**_P3, "block_s": "split"}, _PA, {**_P3, "block_s": "split"},
)
PDL_TILES_MORE = (_PA, {**_P3, "block_s": "split"}, {**_P3, "block_s": 128}, {**_P3, "block_s": "split", "max_split": 128},
                  {**_P2, "block_s": "split"}, _PA, {**_P3, "block_s": "split"})
_TA = {**_P3, "block_s": "split"}  # = TUNED_ARGS at 4e687c6's successor
_TT = _TA["tune"]
PDL_ROUND3 = (  # --pdl-round3: programs and chunks once more around the new tuned step
    _TA, *({**_TA, "tune": {**_TT, k: {**_TT.get(k, {}), **t}}} for k, t in (
        ("qkv", {"target_programs": 264}), ("o_proj", {"target_programs": 132}), ("gate_up", {"block_k": 2048}),
        ("gate_up", {"target_programs": 1056}), ("down", {"target_programs": 1056}), ("head", {"num_warps": 8}),
        ("down", {"block_k": 8192}), ("qkv", {"target_programs": 1056}))),
    {**_TA, "max_split": 16}, _TA,
)
PDL_ROUND3_MORE = (_TA, PDL_ROUND3[1], PDL_ROUND3[2], {**_TA, "max_split": 32}, _TA)
_T4 = {**_TT, "o_proj": {"block_k": 2048, "target_programs": 132}, "gate_up": {"target_programs": 1056}}
PDL_ROUND4 = (  # --pdl-round4: round 3's two near-gains together, attention's warps, L2 asks and evict-first
    _TA, {**_TA, "tune": _T4}, {**_TA, "attn_warps": 2}, {**_TA, "attn_warps": 8}, _TA,
    {**_TA, "pf_gu_mb": (0, 8, 0)}, {**_TA, "pf_gu_mb": (0, 16, 8)}, {**_TA, "pf_gu_mb": (4, 8, 4)},
    {**_TA, "evict": "evict_first"}, {**_TA, "pf_qkv_next": True}, _TA, {**_TA, "tune": _T4},
)
PDL_ROUND4_MORE = (_TA, {**_TA, "tune": _T4}, {**_TA, "attn_warps": 2}, {**_TA, "attn_warps": 8}, _TA)
_T5 = {**_TA, "tune": _T4, "attn_warps": "auto"}  # TUNED_ARGS from 3de70d1 to 5fc16e9 (before the loop forms)
PDL_ROUND5 = (  # --pdl-round5: the new tuned step against its parts, alternated
    _TA, _T5, {**_T5, "attn_warps": 1}, {**_TA, "attn_warps": "auto"}, _T5, {**_T5, "tune": {**_T4, "gate_up": {}}},
    {**_T5, "tune": {**_T4, "o_proj": {"block_k": 2048, "target_programs": 264}}}, _TA, _T5,
)
PDL_ROUND5_MORE = (_TA, _T5, {**_T5, "attn_warps": 4}, _TA, _T5)
_FL = {"pipe": True, "x2d": True, "acc2d": True}  # the GEMV loop without a barrier until its end (decode_gemv)
_PX = {"pipe": True, "x2d": True}


def _t5(**kinds) -> dict:
    """The shipped step with these launch kinds' tune entries updated."""
    return {**_T5, "tune": {**_T4, **{k: {**_T4.get(k, {}), **v} for k, v in kinds.items()}}}


_DG = _t5(down=_FL, gate_up=_FL)
FLAT = (  # --flat: the GEMVs' next chunk loaded before this chunk's reduction, x in the tile's layout, sums kept
    _T5, _t5(down=_FL), _t5(gate_up=_FL), _DG, _t5(down=_FL, gate_up={**_FL, "target_programs": 4096}),
    _t5(down=_PX), _t5(gate_up=_PX), _t5(qkv=_FL, o_proj=_FL, gate_up=_FL, down=_FL, head=_PX),
    _t5(down={**_FL, "block_k": 1024}), _T5, _DG, _t5(down=_FL, gate_up={"pipe": True, "acc2d": True}),
    _t5(down=_FL, gate_up=_FL, head={"pipe": True}), _T5, _DG,
)
FLAT_MORE = (_T5, _DG, FLAT[4], FLAT[7], _T5)
_DP = _t5(down=_PX)
_DGP = _t5(down=_PX, gate_up=_PX)
PX = (  # --px: the flat sweep's gain (pipe + x2d, no acc2d: d4aa9ec) by part and by kind, alternated
    _T5, _DP, _DGP, _t5(down=_PX, gate_up=_PX, qkv={"x2d": True}, o_proj={"x2d": True}),
    _t5(down=_PX, gate_up=_PX, head=_PX), _t5(down={"x2d": True}), _t5(down={"pipe": True}),
    _t5(down={**_PX, "block_k": 1024}), _t5(down={**_PX, "block_k": 4096}), _t5(down={**_PX, "target_programs": 1056}),
    _t5(down=_PX, gate_up={"x2d": True}), _T5, _DGP, _DP, _t5(down={**_PX, "block_k": 1024}, gate_up=_PX),
    _t5(down=_PX, gate_up={**_PX, "block_k": 512}), _T5, _DGP,
)
PX_MORE = (_T5, _DP, _DGP, PX[3], _T5, _DGP)
_P2X = {"pipe": 2, "x2d": True}


def _dg(down=None, gate_up=None, **kinds) -> dict:
    """_DGP (down and gate/up with pipe + x2d) with these kinds' entries updated."""
    return _t5(down={**_PX, **(down or {})}, gate_up={**_PX, **(gate_up or {})}, **kinds)


DEEP = (  # --deep: the GEMV pipeline two chunks deep, two chunks before the wait, around _DGP (6c3cfb2: 0.757 ms)
    _T5, _DGP, _dg(down=_P2X), _dg(down={"pre": 2}), _dg(down={**_P2X, "pre": 2}),
    _dg(down={**_P2X, "block_k": 1024}), _dg(down={**_P2X, "block_k": 1024, "pre": 2}), _dg(gate_up={"pre": 2}),
    _dg(gate_up={**_P2X, "block_k": 512}), _dg(gate_up={"block_k": 512, "pre": 2}), _DGP, _dg(head=_PX),
    _dg(gate_up={"target_programs": 4096}), _dg(down={"target_programs": 264}), _T5, _DGP,
)
DEEP_MORE = (_T5, _DGP, DEEP[2], DEEP[3], DEEP[4], _T5)
_W = lambda n: {"num_warps": n}  # noqa: E731
PX2 = (  # --px2: warps and the last kinds' loop forms around TUNED_ARGS at bfbd0b7 (= _DGP)
    _DGP, _dg(head=_PX), _dg(head=_PX, down=_W(8)), _dg(down=_W(2)), _dg(gate_up=_W(8)), _dg(gate_up=_W(2)),
    _dg(head=_PX, o_proj={"x2d": True}), _dg(head={**_PX, **_W(8)}), _DGP, _dg(head=_PX),
    _dg(head=_PX, qkv={"x2d": True, "target_programs": 1056}), _dg(head=_PX, down=_W(8), gate_up=_W(8)), _DGP,
    _dg(head=_PX),
)
PX2_MORE = (_DGP, _dg(head=_PX), PX2[2], PX2[4], _DGP, _dg(head=_PX))
_DGH = _dg(head=_PX)


def _b(gate_up=None, **kinds) -> dict:
    """_DGH with gate/up on 2 warps (01a99cb: 0.736 against 0.752-0.753 ms) and these entries updated."""
    return _dg(head=_PX, gate_up={**_W(2), **(gate_up or {})}, **kinds)


_B = _b()
PX3 = (  # --px3: fewer warps per GEMV program (one warp: no barrier at all in its reductions), around _B
    _B, _b(gate_up=_W(1)), _b(gate_up={**_W(1), "block_k": 512}), _b(gate_up={**_W(1), "target_programs": 4096}),
    _b(gate_up={"block_k": 512}), _b(gate_up={"target_programs": 4096}), _b(gate_up={"pipe": 0, "x2d": False}),
    _b(down={**_PX, **_W(1), "block_k": 1024}), _B, _b(down={**_PX, **_W(1), "block_k": 512}),
    _b(down={**_PX, **_W(2), "block_k": 1024}), _b(qkv={"block_k": 2048, **_W(2)}), _DGH, _B,
)
PX3_MORE = (_B, _DGH, PX3[1], PX3[3], PX3[7], _B)
KV8K = (  # --kv8k (run with --kv 8192 --more-kv 1024): attention's tile and warps at the long end, around _B
    _B, {**_B, "block_s": 256, "attn_warps": 8}, {**_B, "block_s": 256, "attn_warps": 4}, {**_B, "attn_warps": 8},
    {**_B, "attn_warps": 2}, _B, _b(o_proj={"block_k": 2048, "target_programs": 132, **_W(8)}), {**_B, "block_s": 64}, _B,
)
KV8K_MORE = (_B, KV8K[6], _B)
_M = lambda n, **kw: {**_B, "attn_merge": n, **kw}  # noqa: E731
MERGE = (  # --merge (run with --kv 8192 --more-kv 1024): attention's merge in groups of splits (fewer registers)
    _B, _M(8), _M(16), _M(4), _B, _M(8, attn_warps=8), _M(16, max_split=128), _M(32, max_split=128),
    _M(8, block_s=256, attn_warps=8), _M(8), _B,
)
MERGE_MORE = (_B, _M(8), _M(4), _M(16), _B, _M(8))
_R = lambda n, **kw: {**_B, "attn_maxnreg": n, **kw}  # noqa: E731
NREG = (  # --nreg (run with --kv 8192 --more-kv 1024): attention's registers capped, so its programs fit one wave
    _B, _R(128), _R(96), _R(104), _B, {**_B, "max_split": 32, "block_s": 128}, _R(128, attn_pre=False),
    _R(128, max_split=32, block_s=128, attn_warps=8), _R(128), _B, _R(112), _R(128),
)
NREG_MORE = (_B, _R(128), _R(96), _B, _R(128))
_K = lambda *e, **kw: {**_B, "pf_kv": e, **kw}  # noqa: E731
PFKV = (  # --pfkv (run with --kv 8192 --more-kv 1024): the K/V caches asked of the L2 by the launches before attention
    _B, _K("qkv:k"), _K("qkv:v"), _K("qkv:k", "down:v"), _B, _K("down:k", "qkv:v"), _K("qkv:k", pf_policy=2),
    _K("down:v"), _K("qkv:k"), _B,
)
PFKV_MORE = (_B, _K("qkv:k"), _K("qkv:k", "down:v"), _B)
_PB = {**_B, "attn_part_bf16": True}
RESID = (  # --resid (run with --kv 8192 --more-kv 1024): fewer registers held by attention (bf16 partials, a cap)
    # and by QKV, the launch it starts beside, so more attention programs are resident and load early
    _B, _PB, _R(128), {**_PB, "attn_maxnreg": 128}, _b(qkv={"block_k": 1024}), _B,
    {**_b(qkv={"block_k": 1024}), "attn_part_bf16": True}, _b(qkv={"target_programs": 264}),
    {**_b(qkv={"target_programs": 264}), "attn_part_bf16": True}, _b(qkv={"target_programs": 1056}), _B, _PB,
    {**_b(qkv={"block_k": 1024}), "attn_part_bf16": True, "attn_maxnreg": 128}, _B, _PB,
)
RESID_MORE = (_B, _PB, {**_PB, "attn_maxnreg": 128}, _B, _PB)
_PI = {**_B, "attn_patch_if": True}
PATCH = (  # --patch (run with --kv 8192 --more-kv 1024): slot pos patched in by its split only, alternated
    _B, _PI, _B, _PI, {**_PI, "attn_maxnreg": 128}, _B, _PI, _B, _PI,
)
PATCH_MORE = (_B, _PI, _B, _PI, _B, _PI)
_OP = lambda bk, n, **kw: {**_b(o_proj={"block_k": bk, "target_programs": n}), **kw}  # noqa: E731
OPROG = (  # --oprog (run with --kv 8192 --more-kv 1024): O on more, smaller programs (fewer registers each), so
    # they fit beside attention's programs and load their weights before attention ends; with bf16 partials
    _B, _OP(2048, 264), _OP(2048, 528), _OP(1024, 528), _OP(1024, 264), _B,
    _OP(2048, 264, attn_part_bf16=True), _OP(2048, 528, attn_part_bf16=True), _OP(1024, 528, attn_part_bf16=True),
    _OP(1024, 1056), _OP(2048, 528, attn_maxnreg=128), _B,
)
OPROG_MORE = (_B, _OP(2048, 264), _OP(2048, 528), _OP(1024, 528), _B)
_TL = lambda bs, w, **kw: {**_B, "block_s": bs, "attn_warps": w, **kw}  # noqa: E731
TILE8K = (  # --tile8k (run with --kv 8192 --more-kv 1024): fewer, larger splits on 8 warps (one wave, a smaller merge)
    _B, _TL(256, 8), _TL(512, 8), _TL(256, 4), _B, _TL(256, 8), _TL(512, 8), _TL(256, 8, attn_patch_if=True), _B,
)
_OM = lambda **t: {**(_b(o_merge=t) if t else _B), "o_merge": True}  # noqa: E731
OMERGE = (  # --omerge (run with --kv 8192 --more-kv 1024): attention stores its partials only, O merges them
    # (suite/lib/decode_o_merge.py: no counter, no last-split merge in the chain), alternated with _B
    _B, _OM(), _OM(target_programs=256, num_warps=4), _OM(target_programs=256, num_warps=8), _B,
    {**_OM(), "block_s": 256, "attn_warps": 8}, {**_OM(), "attn_part_bf16": True}, _OM(target_programs=64), _B, _OM(),
)
OMERGE_MORE = (_B, _OM(), _OM(target_programs=256, num_warps=4), _B, _OM())
# --name: (its configurations, the ones timed again at each --more-kv, the ones broken down by launch kind)
SETS = {
    "final": (FINAL, (), ()), "dataflow": (DATAFLOW, DATAFLOW_MORE, ()), "mlp": (MLP, MLP[:2], MLP[:2]),
    "early": (EARLY, EARLY, EARLY[:2]), "retune": (RETUNE, RETUNE[:1], ()), "o_ab": (O_AB, O_AB, ()),
    "pdl_kinds": (PDL_KINDS, PDL_KINDS[:4], PDL_KINDS[:3]), "pdl_ab": (PDL_AB, PDL_AB_MORE, ()),
    "pdl_retune": (PDL_RETUNE, PDL_RETUNE_MORE, ()), "pdl_tiles": (PDL_TILES, PDL_TILES_MORE, PDL_TILES[:1] + PDL_TILES[4:5]),
    "pdl_round3": (PDL_ROUND3, PDL_ROUND3_MORE, PDL_ROUND3[:1]), "pdl_round4": (PDL_ROUND4, PDL_ROUND4_MORE, ()),
    "pdl_round5": (PDL_ROUND5, PDL_ROUND5_MORE, PDL_ROUND5[1:2]), "flat": (FLAT, FLAT_MORE, FLAT[3:4]),
    "px": (PX, PX_MORE, PX[2:3]), "deep": (DEEP, DEEP_MORE, DEEP[2:3]),
    "px2": (PX2, PX2_MORE, PX2[1:2]),
    "px3": (PX3, PX3_MORE, PX3[:1]), "kv8k": (KV8K, KV8K_MORE, KV8K[:1]),
    "merge": (MERGE, MERGE_MORE, MERGE[:2]), "nreg": (NREG, NREG_MORE, NREG[:2]),
    "pfkv": (PFKV, PFKV_MORE, PFKV[:2]), "resid": (RESID, RESID_MORE, RESID[:2]),
    "patch": (PATCH, PATCH_MORE, PATCH[:2]), "oprog": (OPROG, OPROG_MORE, ()),
    "tile8k": (TILE8K, (_B,), TILE8K[:3]), "omerge": (OMERGE, OMERGE_MORE, OMERGE[:2]),
}
