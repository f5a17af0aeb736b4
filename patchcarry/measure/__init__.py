"""`measure`: retained memory per variant (unpatched, fix, reset, both), the analytic model,
the evidence file and its plot.

Layout: `model` predicts, `variants` prepares patched trees, `runner` runs one child process
per variant, `probe` is that child, `hc_gpt`/`synthetic_model` build what it runs,
`evidence` writes/validates/renders the result, `plot` draws it.
"""
