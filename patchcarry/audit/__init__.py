"""The retention audit: what a Megatron model keeps alive between iterations, and who holds
it, read from what Python and autograd expose (one child process per tree)."""
