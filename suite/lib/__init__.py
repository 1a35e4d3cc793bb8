"""Kernels and helpers shared by technique folders; a technique imports these, never another technique."""
