"""Open or refresh the upstream PR from an attached fork. The journey: run.py."""
