"""git, the outside program: one module per thing git does (`env` the isolated environment
and credentials, `remote` the network, `history` and `trees` the reads, `index` the scratch
index, `mail` patches, `repo` local set-up), one runner (`runner.git`) that only they call.
Callers use `from patchcarry import git; git.name(...)`: each module's public names are the
door (the runner's process handling and a module's helpers keep a leading underscore)."""

from __future__ import annotations

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
