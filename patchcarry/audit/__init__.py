"""The retention audit: what a Megatron model keeps alive between iterations, and who holds it.

`walk` finds the shortest readable path from the model (then the optimizer, the step's inputs,
megatron's globals) to every tensor; `census` counts live tensors by storage less the model's
own state; `sites` folds paths into sites; `child` runs in one process per tree, `runner` is
the parent side; `evidence` validates and renders; `judge` decides the drift watch's issue.
"""
