"""`measure`: retained memory per variant (unpatched, fix, reset, both) against the analytic
model, written as evidence and a plot; `pretrain*` runs upstream's own training loop."""
