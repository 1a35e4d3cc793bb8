"""Claims: every attributed figure of the page, as plain data, with the rule that checks it."""
from suite.claims.spec import (CONTRADICTED, NOT_ON_OUR_HARDWARE, NOT_REPRODUCED, PENDING, REPRODUCED,
                               STATUSES, Arithmetic, Band, Claim, Custom, Projection, Selector, judge)

__all__ = ["CONTRADICTED", "NOT_ON_OUR_HARDWARE", "NOT_REPRODUCED", "PENDING", "REPRODUCED", "STATUSES",
           "Arithmetic", "Band", "Claim", "Custom", "Projection", "Selector", "judge"]
