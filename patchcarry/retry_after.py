"""How long GitHub asks to wait: `Retry-After` read as RFC 9110 says (seconds or an HTTP-date);
garbage gets the caller's default, never a crash."""

from __future__ import annotations

import email.utils
import re

# RFC 9110 delay-seconds are ASCII digits (float() would take "inf" and "1_0"); a wait is
# capped at a day.
_DELAY = re.compile(r"-?[0-9]+")
MAX_WAIT_S = 86_400.0


def seconds(value: str | None, now: float) -> float | None:
    """The wait `value` asks for, in seconds from `now` (a Unix time), never negative; None
    when there is no header or it is neither a number nor a date (the caller's default)."""
    if value is None:
        return None
    text = value.strip()
    if _DELAY.fullmatch(text):
        return min(MAX_WAIT_S, max(0.0, float(text)))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110: an HTTP-date is GMT
        return None
    return min(MAX_WAIT_S, max(0.0, when.timestamp() - now))


def until_reset(value: str | None, now: float) -> float:
    """Seconds from `now` to an `X-RateLimit-Reset` epoch (digits only, capped like a
    Retry-After); 0 when the header is absent or not a number."""
    text = (value or "").strip()
    if not _DELAY.fullmatch(text):
        return 0.0
    return min(MAX_WAIT_S, max(0.0, float(text) - now))
