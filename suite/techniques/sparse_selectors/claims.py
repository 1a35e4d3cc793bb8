"""Claims of the sparse-attention papers the page cites whose selectors we model (MSA, DHSA)."""
from suite.claims.spec import Arithmetic, Claim, rounded, stated

SECTION = "Design — sparse attention: the three named schemes"
MSA = ("MSA — MiniMax Sparse Attention (2026); figures as reported by MarkTechPost (2026-06-17) and "
       "the paper's summary")
DHSA = ("DHSA — Xiong et al., Long-Context Modeling with Dynamic Hierarchical Sparse Attention for "
        "On-Device LLMs (NeurIPS 2025), abstract")
DHSA_URL = "https://arxiv.org/abs/2510.24606"
T = "sparse_selectors"

CLAIMS = (
    Claim("msa_budget_2048_tokens",
          "MSA keeps k = 16 blocks of 128 tokens per query and GQA group: a fixed budget of 2,048 KV tokens.",
          2048, "tokens", MSA, "arithmetic", "any", SECTION, rounded(2048, 0.5),
          Arithmetic("suite.claims.arithmetic:count_sum", {"blocks_x_128": 16 * 128}), technique=T,
          quantity="16 x 128"),
    Claim("msa_compute_28x_1m",
          "MSA cuts per-token attention compute 28.4x at 1M context while matching GQA on benchmarks.",
          28.4, "x", MSA, "authors", "any", SECTION, stated(28.4), None, technique=T,
          note="needs MSA's trained model; our torch_msa_index is an untrained structural analog"),
    Claim("msa_prefill_14x_h800",
          "MSA: 14.2x prefill wall-clock speedup at 1M context on H800.",
          14.2, "x", MSA, "authors", "H800", SECTION, stated(14.2), None, technique=T, runs_on=("H800",),
          projection="suite.claims.projections:ratio_cancels",
          note="needs MSA's model and open inference kernel at 1M context"),
    Claim("msa_decode_7p6x_h800",
          "MSA: 7.6x decode wall-clock speedup at 1M context on H800.",
          7.6, "x", MSA, "authors", "H800", SECTION, stated(7.6), None, technique=T, runs_on=("H800",),
          projection="suite.claims.projections:ratio_cancels",
          note="needs MSA's model and open inference kernel at 1M context"),
    Claim("dhsa_prefill_latency_25_45pct",
          "DHSA reduces prefill latency by 25-45% and peak memory by 30-35%.",
          (25, 45), "% latency", DHSA, "authors", "authors' on-device setup", SECTION, None, None,
          technique=T, url=DHSA_URL,
          note="model-level (Gemma2) latency; the arXiv v1 abstract says 20-60% and 35%"),
)
