"""`measure`: retained memory per variant (unpatched, fix, reset, both), the analytic model,
the evidence file and its plot.

Layout: `model` predicts; `variants` plans and prepares the patched tree copies; `session`
runs one `child` process per variant through `runner`; `hc_gpt` and `synthetic_model` build
what the child runs (with their CPU stand-ins); `evidence` writes, validates and renders the
result; `plot` draws it; `upstream_tests` runs upstream's unit tests on both trees for
`scripts/gpu-check.sh`.
"""
