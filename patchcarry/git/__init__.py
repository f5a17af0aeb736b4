"""git, the outside program: one module per thing git does, one runner only they call."""

from __future__ import annotations

from patchcarry.git import repo as _repo
from patchcarry.git import shallow as _shallow
from patchcarry.git.batch import *
from patchcarry.git.env import *
from patchcarry.git.history import *
from patchcarry.git.index import *
from patchcarry.git.mail import *
from patchcarry.git.remote import *
from patchcarry.git.repo import *
from patchcarry.git.runner import *
from patchcarry.git.sha import *
from patchcarry.git.shallow import *
from patchcarry.git.trees import *


def forget_run_memos() -> None:
    """Start a run with nothing remembered from an earlier one (its log shows its own gits)."""
    _shallow.forget_shallow_files()
    _repo.is_valid_branch_name.cache_clear()
