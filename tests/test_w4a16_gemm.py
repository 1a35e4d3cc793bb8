"""W4A16: INT4 packing by hand, and the fused Triton kernel under the interpreter against the
unfused path (dequantize to bf16, then a bf16 GEMM): the same bf16 weights, so the same products."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from runners.correctness import rel_err  # noqa: E402
from suite.lib import int4  # noqa: E402
from suite.techniques.w4a16_gemm import reference as R  # noqa: E402
from suite.techniques.w4a16_gemm import packing, triton_unfused  # noqa: E402
from suite.techniques.w4a16_gemm import triton_w4a16_decode as decode  # noqa: E402
from suite.techniques.w4a16_gemm.triton_w4a16_kernel import launch, scratch, w4a16_kernel  # noqa: E402


def test_pack_puts_k_in_nibble_order_with_offset_8():
    q = torch.tensor([[-8, -7, -1, 0, 1, 2, 6, 7]], dtype=torch.int8)  # one row (N=1), K=8
    word = int(int4.pack_k(q)[0, 0]) & 0xFFFFFFFF
    assert word == 0xFEA98710  # nibble j = q[j] + 8: 0, 1, 7, 8, 9, 10, 14, 15
    assert torch.equal(int4.unpack_k(int4.pack_k(q)), q)


def test_quantize_rounds_half_to_even_and_saturates_at_the_stored_scale():
    x = torch.tensor([[0.5, 1.5, 2.5, -2.5, 7.0, 0.0, 0.0, 0.0]])
    s = int4.group_scales(x, 8)
    assert float(s[0, 0]) == 1.0
    assert int4.quantize(x, s).tolist() == [[0, 2, 2, -2, 7, 0, 0, 0]]
    # amax / 7 = 1.0001 rounds to fp16 1.0: 7.0007 / 1.0 rounds to 7, 7.6 would be 8 and saturates.
    y = torch.tensor([[7.6, 7.0007, 0, 0, 0, 0, 0, 0]])
    assert int4.quantize(y, torch.ones(1, 1, dtype=torch.float16)).tolist()[0][:2] == [7, 7]
    assert int4.group_scales(torch.zeros(2, 8), 8).eq(0).all()
    assert int4.quantize(torch.zeros(2, 8), torch.zeros(2, 1, dtype=torch.float16)).eq(0).all()


def _unfused(inp):
    return R.lowp_unfused(**inp)


@pytest.mark.parametrize("m,n,k,group,config", [
    (1, 96, 256, 128, {"BM": 16, "BN": 32, "BK": 64, "SPLIT_K": 2, "BIAS": True}),
    (13, 160, 384, 128, {"BM": 16, "BN": 32, "BK": 64, "SPLIT_K": 4, "BIAS": True}),  # 6 steps, 4 splits
    (13, 160, 384, 128, {"BM": 16, "BN": 32, "BK": 64, "SPLIT_K": 4, "BIAS": False}),
    (40, 64, 512, 64, {"BM": 32, "BN": 32, "BK": 64, "SPLIT_K": 1, "BIAS": False}),
    (33, 48, 256, 128, {"BM": 16, "BN": 32, "BK": 128, "SPLIT_K": 1, "BIAS": True}),
    (13, 160, 384, 128, {"BM": 16, "BN": 32, "BK": 64, "SPLIT_K": 2, "BIAS": True, "gather": True}),
    (40, 64, 512, 64, {"BM": 32, "BN": 32, "BK": 64, "SPLIT_K": 1, "BIAS": False, "gather": True}),
])
def test_fused_kernel_matches_dequantize_then_gemm(m, n, k, group, config):
    inp = R.make_inputs({"m": m, "n": n, "k": k, "group": group}, seed=m, device="cpu")
    want, oracle = _unfused(inp), R.reference(**inp)
    for _ in range(2):  # the second call checks that split-K reset its tile counters
        out = torch.full((m, n), float("nan"), dtype=torch.bfloat16)
        launch(out, inp["a"], inp["qweight"], inp["scales"], kernel=w4a16_kernel, **config)
        assert torch.isfinite(out).all()
        # Never less accurate than the unfused path (the bias path skips its bf16 rounding of q * s).
        assert rel_err(out, oracle) <= 1.05 * rel_err(want, oracle)
        if not config["BIAS"]:  # the same bf16 weights, exact products: only summation order differs
            assert ((out.float() - want.float()).abs() <= 2 ** -7 * want.float().abs() + 1e-6).all()
        assert scratch(m, n, "cpu")[1].eq(0).all()


def test_unfused_triton_pass_writes_the_reference_weights():
    inp = R.make_inputs({"m": 2, "n": 160, "k": 384}, seed=1, device="cpu")
    w = triton_unfused.dequantize(inp["qweight"], inp["scales"], torch.float32)
    assert torch.equal(w, R.weights(inp["qweight"], inp["scales"]).t())
    assert torch.equal(R.weights(inp["qweight"], inp["scales"]).to(torch.bfloat16), inp["w_bf16"])


def test_k16_packing_puts_16_consecutive_k_in_each_nibble_plane():
    q = (torch.arange(256).reshape(1, 256) % 16 - 8).to(torch.int8).repeat(3, 1)  # k % 16 - 8
    q[1] = torch.randint(-8, 8, (256,), dtype=torch.int8, generator=torch.Generator().manual_seed(0))
    words = packing.pack_k16(q)  # (32, 3)
    assert words.shape == (32, 3)
    for b, i, j in ((0, 0, 0), (0, 5, 3), (1, 15, 7), (1, 2, 6)):
        nib = (int(words[16 * b + i, 1]) >> (4 * j)) & 0xF
        assert nib == int(q[1, 128 * b + 16 * j + i]) + 8
    assert (int(words[3, 0]) & 0xFFFFFFFF) == 0x33333333  # row 0: k = 16 j + 3, q = -5 stored as 3
    assert torch.equal(packing.unpack_k16(words), q)



def test_k16t_packing_holds_each_threads_four_k_contiguously():
    q = torch.randint(-8, 8, (24, 256), dtype=torch.int8, generator=torch.Generator().manual_seed(3))
    words, t = packing.pack_k16(q), packing.pack_k16t(q)
    assert t.shape == (24, 32) and t.is_contiguous()
    # slot 4 q + r of a column's block: rows 2q, 2q + 1, 2q + 8, 2q + 9 of pack_k16's tile
    for b, qq, n in ((0, 0, 0), (1, 3, 17), (0, 2, 23)):
        got = [int(v) for v in t[n, 16 * b + 4 * qq: 16 * b + 4 * qq + 4]]
        assert got == [int(words[16 * b + i, n]) for i in (2 * qq, 2 * qq + 1, 2 * qq + 8, 2 * qq + 9)]
    assert sorted(t.flatten().tolist()) == sorted(words.flatten().tolist())

@pytest.mark.parametrize("m,n,k,group,layout,config", [
    (1, 96, 384, 128, "k16", {"BM": 16, "BN": 32, "SPLIT_K": 2}),  # 3 steps, 2 splits
    (13, 160, 384, 128, "k16", {"BM": 16, "BN": 64, "SPLIT_K": 4}),  # a split with no step
    (13, 160, 384, 128, "k8", {"BM": 16, "BN": 32, "SPLIT_K": 2}),
    (40, 64, 512, 64, "k16", {"BM": 16, "BN": 32, "SPLIT_K": 2}),  # groups inside a step
    (40, 64, 512, 64, "k8", {"BM": 16, "BN": 64, "SPLIT_K": 1}),
    # centred weights (q itself, no row sums), two 128-K blocks per step, the swapped product
    (13, 160, 512, 128, "k16", {"BM": 16, "BN": 32, "SPLIT_K": 2, "ASM": True, "CENTRED": True}),
    (1, 96, 768, 128, "k16", {"BM": 16, "BN": 64, "SPLIT_K": 2, "ASM": True, "CENTRED": True,
                              "PREFETCH": True}),
    (13, 256, 640, 128, "k16", {"BM": 16, "BN": 128, "SPLIT_K": 2, "ASM": True, "CENTRED": True,
                                "PREFETCH": True}),
    (1, 128, 384, 128, "k16", {"BM": 16, "BN": 64, "SPLIT_K": 1, "PREFETCH": True}),
    (13, 160, 384, 128, "k16", {"BM": 16, "BN": 64, "SPLIT_K": 3, "ASM": True, "CENTRED": True}),
    (40, 64, 256, 128, "k16", {"BM": 64, "BN": 64, "SPLIT_K": 1, "ASM": True, "CENTRED": True, "PREFETCH": True}),
    (13, 160, 640, 128, "k16", {"BM": 16, "BN": 64, "SPLIT_K": 2, "ASM": True, "CENTRED": True, "PREFETCH": True,
                                "PF_DIST": 2}),  # the L2 prefetch is a hint: off under the interpreter
])
def test_decode_kernel_matches_dequantize_then_gemm(m, n, k, group, layout, config):
    inp = R.make_inputs({"m": m, "n": n, "k": k, "group": group}, seed=m + k, device="cpu")
    want, oracle = _unfused(inp), R.reference(**inp)
    qw = inp["qweight"] if layout == "k8" else inp["qweight_k16"]
    for _ in range(2):  # the second call checks that split-K left workspace and counters at zero
        out = torch.full((m, n), float("nan"), dtype=torch.bfloat16)
        decode.launch(out, inp["a"], qw, inp["scales"], layout=layout, kernel=decode.decode_kernel, **config)
        assert torch.isfinite(out).all()
        assert rel_err(out, oracle) <= 1.05 * rel_err(want, oracle)
        if group % 128:  # q * s rounded to bf16 as unfused: only summation order differs
            assert ((out.float() - want.float()).abs() <= 2 ** -7 * want.float().abs() + 1e-6).all()
        ws, locks = decode.scratch(m, n, "cpu")
        assert ws.eq(0).all() and locks.eq(0).all()


def test_decode_configs_are_pruned_by_m():
    at1 = decode._prune(decode.CONFIGS, {"M_BUCKET": 1, "GROUP": 128})
    assert {c.kwargs["BM"] for c in at1} == {16} and all(c.kwargs["CENTRED"] for c in at1)
    assert {c.kwargs["BM"] for c in decode._prune(decode.CONFIGS, {"M_BUCKET": 16, "GROUP": 64})} == {16}
    assert {c.kwargs["BM"] for c in decode._prune(decode.CONFIGS, {"M_BUCKET": 64, "GROUP": 128})} == {64}
    assert [decode.bucket(m) for m in (1, 2, 16, 17, 2048)] == [1, 16, 16, 64, 64]


@pytest.mark.parametrize("m,n,k,config", [
    (1, 96, 384, {"BN": 32, "SPLIT_K": 2}),  # 3 steps, 2 splits
    (13, 160, 640, {"BN": 64, "SPLIT_K": 3}),  # a ragged column tile
    (16, 64, 256, {"BN": 32, "SPLIT_K": 1}),
])
def test_tma_kernel_matches_dequantize_then_gemm(m, n, k, config):
    from suite.techniques.w4a16_gemm import triton_w4a16_tma as tma

    inp = R.make_inputs({"m": m, "n": n, "k": k}, seed=m + n, device="cpu")
    want, oracle = _unfused(inp), R.reference(**inp)
    for _ in range(2):  # the second call checks that split-K left workspace and counters at zero
        out = torch.full((m, n), float("nan"), dtype=torch.bfloat16)
        tma.launch(out, inp["a"], inp["qweight_k16"], inp["scales"], STAGES=2, **config)
        assert torch.isfinite(out).all()
        assert rel_err(out, oracle) <= 1.05 * rel_err(want, oracle)
        ws, locks = decode.scratch(m, n, "cpu")
        assert ws.eq(0).all() and locks.eq(0).all()



@pytest.mark.parametrize("m,n,k,programs", [
    (1, 96, 384, 5),  # 9 units of 3 blocks: 2 per program, tiles shared by 2 programs
    (13, 160, 640, 4),  # a ragged column tile; 5 blocks a tile, 4 programs for 15 units
    (3, 128, 1024, 7),  # a program spanning three tiles' ends
    (2, 64, 512, 64),  # more programs than units: one block each, idle programs
])
def test_streamk_kernel_matches_dequantize_then_gemm(m, n, k, programs):
    from suite.techniques.w4a16_gemm import triton_w4a16_streamk as sk

    inp = R.make_inputs({"m": m, "n": n, "k": k}, seed=m + k, device="cpu")
    want, oracle = _unfused(inp), R.reference(**inp)
    for _ in range(2):  # the second call checks that workspace and counters were left at zero
        out = torch.full((m, n), float("nan"), dtype=torch.bfloat16)
        sk.launch(out, inp["a"], inp["qweight_k16"], inp["scales"], kernel=sk.streamk_kernel, BN=32,
                  PROGRAMS=programs)
        assert torch.isfinite(out).all()
        assert rel_err(out, oracle) <= 1.05 * rel_err(want, oracle)
        ws, locks = decode.scratch(m, n, "cpu")
        assert ws.eq(0).all() and locks.eq(0).all()
