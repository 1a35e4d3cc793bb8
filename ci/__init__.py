"""KernelWatch CI side: the kwatch command line, gate, change-point detection, nightly job."""
