"""The page's Morton-order diagram, checked by computing the layouts (page: "Morton codes")."""
from suite.claims.spec import Arithmetic, Claim, rounded

SECTION = "Morton codes — making the selected blocks addressable"
PAGE = "the page's row-major vs Morton diagram (4x4 grid)"
A = "suite.claims.arithmetic"

CLAIMS = (
    Claim("morton_2x2_tile_4_consecutive",
          "Morton / Z-order: a 2x2 tile is 4 consecutive addresses.",
          4, "addresses", PAGE, "arithmetic", "any", SECTION, rounded(4, 0.5),
          Arithmetic(f"{A}:morton_tile_span", {"n": 4, "tile": 2}), technique="morton_order",
          quantity="largest address span of an aligned 2x2 tile"),
    Claim("rowmajor_2x2_tile_4_rows",
          "Row-major: a 2x2 tile touches 4 rows.",
          4, "rows", PAGE, "arithmetic", "any", SECTION, rounded(4, 0.5),
          Arithmetic(f"{A}:rowmajor_tile_rows", {"n": 4, "tile": 2}), technique="morton_order",
          quantity="grid rows an aligned 2x2 tile lies in",
          note="the diagram's point (two separate address runs, not one) stands; the count of rows does not"),
)
