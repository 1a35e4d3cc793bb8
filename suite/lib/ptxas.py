"""Register and spill counts of PTX compiled for sm_90a by Triton's bundled ptxas (no GPU needed)."""
from __future__ import annotations

import os
import re
import subprocess
import tempfile


def usage(ptx: str, arch: str = "sm_90a") -> tuple[int, int]:
    """(registers per thread, spill bytes stored) that ptxas -v reports for the PTX's last kernel."""
    import triton

    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
        f.write(ptx)
        f.flush()
        err = subprocess.run([tool, "-v", f"--gpu-name={arch}", f.name, "-o", os.devnull], capture_output=True,
                             text=True, check=True).stderr
    return int(re.findall(r"Used (\d+) registers", err)[-1]), int(re.findall(r"(\d+) bytes spill stores", err)[-1])
