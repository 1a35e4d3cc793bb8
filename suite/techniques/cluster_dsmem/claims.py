"""Claims of the page's cluster section that no benchmark here can decide, with the reason."""
from suite.claims.projections import none_possible
from suite.claims.spec import PAGE, Claim, Projection

SECTION = "Thread block clusters and distributed shared memory"


def bandwidth_sum(analog: float | None) -> Projection:
    """A bandwidth from two paths used at once: no datasheet lists DSMEM bandwidth, so none projects it."""
    return none_possible("no datasheet rate for distributed shared memory; only a kernel that reads "
                         "peer shared memory and L2 at once can check it")

CLAIMS = (
    Claim("dsmem_l2_combined_bandwidth",
          "DSMEM can be used simultaneously with L2, so a kernel can draw on the combined bandwidth of "
          "both rather than choosing.",
          1, "x L2 alone", PAGE, "vendor", "Hopper (H100, H200) and Blackwell", SECTION, None, None,
          technique="cluster_dsmem", runs_on=("H200",),
          projection="suite.techniques.cluster_dsmem.claims:bandwidth_sum",
          note="not measurable with this stack: Triton 3.6 reaches clusters only through num_ctas (a "
               "cluster launch whose tile split is the compiler's; no language op reads another CTA's "
               "shared memory), Gluon 3.6 has CTA layouts but no documented DSMEM load, and torch exposes "
               "no cluster launch; cluster_dsmem times num_ctas = 1/2/4 and counts the cluster "
               "instructions the compiler emitted"),
)
