"""How long GitHub asks to wait: a `Retry-After` header read as HTTP says (RFC 9110 10.2.3),
delay-seconds or an HTTP-date, so a server or proxy that sends a date, a negative number or
garbage gets a wait (or the caller's own default), never a crash."""

from __future__ import annotations

import email.utils


def seconds(value: str | None, now: float) -> float | None:
    """The wait `value` asks for, in seconds from `now` (a Unix time), never negative; None
    when there is no header or it is neither a number nor a date (the caller's default)."""
    if value is None:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110: an HTTP-date is GMT
        return None
    return max(0.0, when.timestamp() - now)
