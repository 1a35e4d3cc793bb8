"""Llama-3 decoder constants shared by the decode kernels (suite/lib/decode_*) and the decode-step oracle:
RoPE theta (NeoX split-half, frequency rescaling left out), RMSNorm epsilon, and the Llama-3.2-1B shape."""
from __future__ import annotations

THETA = 500000.0
EPS = 1e-5
LLAMA_1B = {"layers": 16, "hidden": 2048, "heads": 32, "kv_heads": 8, "head_dim": 64,
            "inter": 8192, "vocab": 128256}
