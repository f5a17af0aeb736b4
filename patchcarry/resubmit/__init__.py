"""Open or refresh the upstream PR from an attached fork; one module per concern."""
