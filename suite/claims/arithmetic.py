"""Arithmetic checks: each recomputes a page figure from its stated inputs -> (value, detail)."""
from __future__ import annotations

import math

from suite.claims.datasheets import FORMATS, GENERATIONS, cite, rate

# The page's four workloads (prompt tokens, generated tokens), from its "Example" section.
WORKLOADS = {"chat": (600, 400), "rag": (8_000, 500), "doc": (64_000, 1_000), "repo": (500_000, 2_000)}


def attn_pairs(prompt: int, generated: int) -> tuple[float, float]:
    """(prefill, decode) attention work in query-key pairs: p^2/2 and p*g + g^2/2 (page's model)."""
    return prompt * prompt / 2, prompt * generated + generated * generated / 2


def prefill_saving(workload: str, sparsity: float = 0.10) -> tuple[float, str]:
    """Dense / sparse attention work when sparsity multiplies only the prefill term."""
    p, g = WORKLOADS[workload]
    pre, dec = attn_pairs(p, g)
    saving = (pre + dec) / (pre * sparsity + dec)
    return saving, (f"p={p}, g={g}: prefill {pre:.4g}, decode {dec:.4g} pairs; dense {pre + dec:.4g} / "
                    f"sparse {pre * sparsity + dec:.4g} = {saving:.3f}x at {sparsity:.0%} of keys")


def prefill_share(workload: str) -> tuple[float, str]:
    """Prefill's share of dense attention work, in percent."""
    p, g = WORKLOADS[workload]
    pre, dec = attn_pairs(p, g)
    share = 100 * pre / (pre + dec)
    return share, f"p={p}, g={g}: {pre:.4g} / ({pre:.4g} + {dec:.4g}) = {share:.2f}%"


def prefill_ceiling(workload: str) -> tuple[float, str]:
    """Saving with a perfect selector (sparsity -> 0): dense / decode."""
    p, g = WORKLOADS[workload]
    pre, dec = attn_pairs(p, g)
    return (pre + dec) / dec, f"p={p}, g={g}: ({pre:.4g} + {dec:.4g}) / {dec:.4g} = {(pre + dec) / dec:.3f}x"


def ceiling_from_share(share: float) -> tuple[float, str]:
    """Saving ceiling when prefill is `share` of the work: 1 / (1 - share)."""
    return 1 / (1 - share), f"1 / (1 - {share:.3f}) = {1 / (1 - share):.3f}x"


def rope_table(positions: int = 131_072, head_dim: int = 128, bytes_per_value: int = 0) -> tuple[float, str]:
    """cos+sin table size: 2 x positions x head_dim/2 values, or MB (1e6 bytes) when bytes_per_value."""
    values = 2 * positions * (head_dim // 2)
    if not bytes_per_value:
        return values / 1e6, f"2 x {positions} x {head_dim // 2} = {values} values"
    mb = values * bytes_per_value / 1e6
    return mb, f"{values} values x {bytes_per_value} B = {values * bytes_per_value} B = {mb:.2f} MB"


def bf16_spacing(x: float = 100_000.0) -> tuple[float, str]:
    """Gap between adjacent bf16 numbers at x (8 significant bits): 2^(floor(log2 x) - 7)."""
    gap = 2.0 ** (math.floor(math.log2(x)) - 7)
    return gap, (f"bf16 keeps 8 significant bits: near {x:g} adjacent values are {gap:g} apart, so an "
                 f"angle m*theta there is off by up to {gap / 2:g} rad (2*pi = {2 * math.pi:.3f})")


def peak_ratio(gpu: str, num: str, den: str, also: str | None = None) -> tuple[float, str]:
    """Ratio of two datasheet peak rates of one GPU (and, for comparison, of the `also` sheet)."""
    a, b = rate(gpu, num), rate(gpu, den)
    detail = f"{gpu} {num} / {den} = {a.value:g} / {b.value:g} = {a.value / b.value:.3f} ({a.source})"
    if also:
        c, d = rate(also, num), rate(also, den)
        detail += f"; {also}: {c.value:g} / {d.value:g} = {c.value / d.value:.3f} ({c.source})"
    return a.value / b.value, detail


def utilisation(tflops: float, gpu: str, key: str = "bf16") -> tuple[float, str]:
    """A throughput as a percentage of a datasheet peak."""
    peak = rate(gpu, key)
    return 100 * tflops / peak.value, f"{tflops:g} / {cite(gpu, key)} = {100 * tflops / peak.value:.2f}%"


def emulation_net_speedup(cheaper: float = 28.0, products: int = 9) -> tuple[float, str]:
    """Net speedup of `products` BF16 GEMMs that are each `cheaper` times faster than one FP32 GEMM."""
    return cheaper / products, f"{cheaper:g} / {products} = {cheaper / products:.3f}x"


def bits_per_weight(fmt: str) -> float:
    """Storage bits per element of a block-scaled format, its scales charged (e.g. NVFP4 4.5);
    "FP8" is per-tensor scaled (one scale for the whole tensor: 8 bits)."""
    if fmt == "FP8":
        return 8.0
    block, scale_bits, _ = FORMATS[fmt]
    return (4 if "FP4" in fmt else 8) + scale_bits / block


def fp4_weight_bytes_ratio(fp8: str = "MXFP8", fp4: str = "NVFP4") -> tuple[float, str]:
    """FP8 bits per weight / FP4 bits per weight, each format's block scales charged."""
    r = bits_per_weight(fp8) / bits_per_weight(fp4)
    others = [(a, b) for a in ("MXFP8", "FP8") for b in ("NVFP4", "MXFP4") if (a, b) != (fp8, fp4)]
    return r, (f"{fp8} {bits_per_weight(fp8):g} bits / {fp4} {bits_per_weight(fp4):g} bits per weight = "
               f"{r:.3f}x; " + "; ".join(f"{a} / {b} = {bits_per_weight(a) / bits_per_weight(b):.3f}x"
                                          for a, b in others)
               + " (FP8 = per-tensor scale; " + "; ".join(sorted({FORMATS[f][2] for f in (fp4, fp8) if f in FORMATS}))
               + ")")


def generation_ratios(key: str = "bf16") -> tuple[float, str]:
    """Datasheet rate ratio of every GPU pair from consecutive tensor-core generations; the value is the
    pair farthest from 2x (by |log2 ratio - 1|), so one pair off the claim shows."""
    pairs = [(o, n, rate(n, key).value / rate(o, key).value)
             for (_, olds), (_, news) in zip(GENERATIONS, GENERATIONS[1:]) for o in olds for n in news]
    worst = max(pairs, key=lambda p: abs(math.log2(p[2]) - 1))
    first, last = GENERATIONS[0][1][-1], GENERATIONS[-1][1][0]
    span = rate(last, key).value / rate(first, key).value
    per_gen = span ** (1 / (len(GENERATIONS) - 1))
    gpus = [g for _, gs in GENERATIONS for g in gs]
    return worst[2], ("; ".join(f"{key}: {n} / {o} = {r:.3f}" for o, n, r in pairs)
                      + f"; {last} / {first} = {span:.2f} over {len(GENERATIONS) - 1} generations = "
                      f"{per_gen:.3f}x per generation; farthest from 2x: {worst[1]} / {worst[0]} ("
                      + "; ".join(sorted({rate(g, key).source for g in gpus})) + ")")


def morton(x: int, y: int, bits: int = 8) -> int:
    """Z-order code of (row y, column x): interleave bits, x in the even positions."""
    code = 0
    for b in range(bits):
        code |= ((x >> b) & 1) << (2 * b) | ((y >> b) & 1) << (2 * b + 1)
    return code


def morton_tile_span(n: int = 4, tile: int = 2) -> tuple[float, str]:
    """Largest address span of an aligned tile x tile block of an n x n grid in Morton order."""
    spans = []
    for ty in range(0, n, tile):
        for tx in range(0, n, tile):
            codes = [morton(tx + i, ty + j) for j in range(tile) for i in range(tile)]
            spans.append(max(codes) - min(codes) + 1)
    return max(spans), f"every aligned {tile}x{tile} tile of a {n}x{n} grid spans at most {max(spans)} addresses"


def rowmajor_tile_rows(n: int = 4, tile: int = 2) -> tuple[float, str]:
    """Rows (and address span) touched by an aligned tile x tile block of an n x n row-major grid."""
    addrs = [j * n + i for j in range(tile) for i in range(tile)]
    rows = len({a // n for a in addrs})
    return rows, (f"the tile {sorted(addrs)} lies in {rows} rows and spans {max(addrs) - min(addrs) + 1} "
                  f"addresses in {rows} runs")


def ffn_param_share(hidden: int = 4096, inter: int = 14_336, heads: int = 32, kv_heads: int = 8,
                    head_dim: int = 128) -> tuple[float, str]:
    """Percent of a gated-FFN decoder layer's matrix parameters in the FFN (norms ignored)."""
    attn = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2
    ffn = 3 * hidden * inter
    share = 100 * ffn / (ffn + attn)
    mha = 4 * 4096 * 4096
    llama2 = 100 * 3 * 4096 * 11_008 / (3 * 4096 * 11_008 + mha)
    return share, (f"hidden {hidden}, FFN {inter}, {heads}/{kv_heads} heads of {head_dim} (Llama-3-8B): "
                   f"FFN {ffn / 1e6:.1f}M of {(ffn + attn) / 1e6:.1f}M = {share:.1f}%; Llama-2-7B "
                   f"(MHA, FFN 11008) gives {llama2:.1f}%")


def count_sum(**counts: int) -> tuple[float, str]:
    """Sum of named counts."""
    total = sum(counts.values())
    return total, " + ".join(f"{k} {v}" for k, v in counts.items()) + f" = {total}"


def nsa_kv_ratio(context: int = 65_536, stride: int = 16, selected: int = 16, block: int = 64,
                 window: int = 512) -> tuple[float, str]:
    """Context / KV tokens NSA reads per decode step (compressed + selected + window)."""
    read = context // stride + selected * block + window
    return context / read, (f"{context} / ({context}/{stride} compressed + {selected}x{block} selected + "
                            f"{window} window = {read}) = {context / read:.2f}x fewer KV tokens read")


def ratio(a: float, b: float, what: str = "") -> tuple[float, str]:
    """a / b, with what it means."""
    return a / b, f"{a:g} / {b:g} = {a / b:.3f}" + (f" ({what})" if what else "")


def format_block(fmt: str) -> tuple[float, str]:
    """Elements per scale block of a block-scaled format, from its defining document."""
    block, bits, source = FORMATS[fmt]
    others = "; ".join(f"{k}: {v[0]}" for k, v in FORMATS.items() if k != fmt)
    return block, f"{fmt}: {block} elements per {bits}-bit scale ({source}); {others}"


def rope_flops(multiplies: int = 2, adds: int = 1) -> tuple[float, str]:
    """FLOPs per rotated element: out_i = x_i cos - x_j sin (the page's 'two multiplies and an add')."""
    n = multiplies + adds
    return n, (f"{multiplies} multiplies + {adds} add = {n} FLOPs per element (x_i cos - x_j sin); "
               "rotate_half's negation would make 4 operations, but a negation is not a FLOP")
