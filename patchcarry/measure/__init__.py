"""`measure`: retained memory per variant against the analytic model, as evidence and plot."""
