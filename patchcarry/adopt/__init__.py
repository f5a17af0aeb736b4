"""adopt: turn an upstream PR (typically one auto-closed when its fork left the fork network)
into carried patches and a manifest entry, checked, in one command."""
