"""git, the outside program: one module per thing git does, one runner only they call."""

from __future__ import annotations

from patchcarry.git import pure as _pure
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
    """Start a run with nothing remembered about repositories from an earlier one; git's pure
    answers (`git.pure`) are kept, and its log shows each once more."""
    _shallow.forget_shallow_files()
    _pure.forget_shown()
