"""Retry policy of durable background work (the vector-index outbox and the job queue): pure."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

#: First retry after about this long; each further failure doubles it, up to ``RETRY_CAP``.
RETRY_BASE = timedelta(seconds=5)
RETRY_CAP = timedelta(hours=1)
#: Each delay is spread by ±this share, so rows that failed together do not retry together.
JITTER = 0.2


def next_attempt(now: datetime, attempts: int, rng: random.Random | None = None) -> datetime:
    """When a piece of work that has failed ``attempts`` times (≥ 1) may be tried again."""
    exponent = min(max(attempts, 1) - 1, 20)
    delay = min(RETRY_CAP, RETRY_BASE * (2**exponent))
    spread = 1 + (rng or random).uniform(-JITTER, JITTER)
    return now + delay * spread


def gives_up(attempts: int, max_attempts: int) -> bool:
    """Whether work that has failed ``attempts`` times is dead (kept, counted, retried by hand)."""
    return attempts >= max_attempts


def after_failure(now: datetime, attempts: int, max_attempts: int) -> datetime | None:
    """The one retry rule of durable work (outbox rows and queued jobs alike): when work that has
    now failed ``attempts`` times may run again, or None when it has given up."""
    return None if gives_up(attempts, max_attempts) else next_attempt(now, attempts)
