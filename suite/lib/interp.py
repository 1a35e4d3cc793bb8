"""Whether Triton kernels run on the CPU interpreter."""
from __future__ import annotations

import os


def interpreting() -> bool:
    """True under TRITON_INTERPRET=1 (Triton kernels run by the CPU interpreter)."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"
