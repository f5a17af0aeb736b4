"""adopt: an upstream PR (one closed when its fork left the network) into patches and an entry."""
