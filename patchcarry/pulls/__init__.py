"""What every command knows about upstream pull requests, beside the GitHub door: how a PR
closed, whose it is, which comments are the tool's own, and the memoized reads of them."""
