"""DHSA's needle claim beside our needle grid (page: "Depth — sparse attention fails at retrieval")."""
from suite.claims.spec import Band, Claim, Custom

SECTION = "Design — sparse attention: the three named schemes"
DHSA = ("DHSA — Xiong et al., Long-Context Modeling with Dynamic Hierarchical Sparse Attention for "
        "On-Device LLMs (NeurIPS 2025), abstract")
T = "needle_retrieval"

CLAIMS = (
    Claim("dhsa_matches_dense_needle",
          "DHSA matches dense attention in accuracy on Needle-in-a-Haystack, without retraining.",
          1, "fraction of exact top-k's needles", DHSA, "authors", "any", SECTION,
          Band(0.9, 1.0, "below", "'matches' -> 90% to all of the needles the exact top-k selection finds "
               "(the share cannot exceed 1); less is 'not reproduced': our DHSA-style selector has no "
               "learned boundary predictor"),
          Custom(T, "suite.claims.needles:retrieval_kept", "retrieval"), technique=T,
          url="https://arxiv.org/abs/2510.24606",
          quantity="share of the needle grid cells retrieved with exact top-k blocks that our DHSA-style "
          "selector also retrieves"),
)
