"""`measure`: retained memory per variant (unpatched, fix, reset, both), the analytic model,
the evidence file and its plot.

Layout: `model` predicts; `variants` plans and prepares the patched tree copies; `session`
runs one `child` process per variant through `runner`; `hc_gpt` and `synthetic_model` build
what the child runs (with their CPU stand-ins); `evidence` writes, validates and renders the
result; `plot` draws it. `pretrain*` is the training-loop harness (upstream's own
`pretrain_gpt.py`, `--harness pretrain`); `impact` turns evidence into the PR body's text.
`gpu_check` composes the GPU run (`gpu_summary` writes its summary); `upstream_tests` runs
upstream's unit tests on both trees and `unit_verdict` sorts their outcomes.
"""
