"""KernelWatch runners: the measuring protocol, correctness gate, environment, result file."""
