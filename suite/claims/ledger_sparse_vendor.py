"""Vendor-only sparse attention claims (SSA): unreplicated, and nothing here can run them."""
from suite.claims.spec import Claim

SECTION = "Design — sparse attention: the three named schemes"
SSA = ("SSA — the vendor's own material; VentureBeat's report of the researcher response asking for "
       "independent proof")
WHY = "vendor's own model and benchmark; the public researcher response asked for independent evaluation"

CLAIMS = (
    Claim("ssa_52x", "SSA's 52x (the company's own number).", 52, "x", SSA, "vendor", "vendor's own",
          SECTION, None, None, note=WHY),
    Claim("ssa_12m_tokens", "SSA's 12M-token context window (the company's own number).", 12e6, "tokens",
          SSA, "vendor", "vendor's own", SECTION, None, None, note=WHY),
)
