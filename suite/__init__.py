"""KernelWatch suite: techniques from the kernel & attention page, each with an oracle."""
