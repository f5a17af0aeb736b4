"""What commands know of upstream PRs: how one closed, whose it is, the tool's comments."""
