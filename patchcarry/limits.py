"""The deadline and size cap of every network exchange, far beyond a real answer's."""

from __future__ import annotations

# One HTTP exchange with the API: GitHub answers in seconds; its largest answer (a page of
# 100 pull requests with their bodies) is a few MiB.
HTTP_DEADLINE_S = 120.0
HTTP_MAX_BYTES = 64 * 1024 * 1024
# What an answer may decode to (`Content-Encoding: gzip`, `deflate`): counted as it is
# decoded, so a small compressed answer never becomes a large one in memory.
HTTP_MAX_DECODED = 64 * 1024 * 1024
HTTP_READ_TIMEOUT_S = 60.0  # one socket read (httpx's own, per-read timeout)
# A request unanswered this long says so on stderr (then again at each try), as it waits on
HTTP_WAIT_NOTICE_S = 10.0

# One git network call: a blob-less fetch of a large history takes minutes; a ref list of
# every pull request of a large project is a few MiB.
GIT_DEADLINE_S = 1800.0
GIT_MAX_OUTPUT = 256 * 1024 * 1024
# What one git call may add to a repository's object store (a fetch's pack, a lazy fetch's
# blobs): Megatron-LM's whole history with every blob is about 1 GiB.
GIT_MAX_WRITTEN = 8 * 1024 * 1024 * 1024
# One git call's process tree (git, its transport, lazy fetches): a handful of processes, the
# largest under 300 MiB; each child's data is capped too (RLIMIT_DATA).
GIT_MAX_PROCESSES = 64
GIT_MAX_MEMORY = 4 * 1024 * 1024 * 1024
# How long a new fork may take to appear (API, then git): GitHub's "contact support after
# five minutes".
FORK_WAIT_S = 300.0
