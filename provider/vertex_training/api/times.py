"""Times as the Vertex AI API gives them: RFC 3339 text, nanoseconds allowed."""

from __future__ import annotations

import re
from datetime import datetime

#: Digits past microseconds, which ``datetime.fromisoformat`` does not take.
_EXTRA_DIGITS = re.compile(r"(\.\d{6})\d+")


def epoch_s(text: str) -> float | None:
    """An RFC 3339 timestamp (as backends give them, nanoseconds allowed) as seconds since
    the epoch; None when empty or unreadable."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(_EXTRA_DIGITS.sub(r"\1", text.replace("Z", "+00:00")))
    except ValueError:
        return None
    return moment.timestamp()
