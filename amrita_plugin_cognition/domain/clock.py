"""Time helpers shared by every layer (pure)."""

from __future__ import annotations

from datetime import datetime, timezone

#: ``datetime.UTC`` exists from Python 3.11 on; this is the same object.
UTC = timezone.utc


def aware_or_now(moment: datetime | None) -> datetime:
    """``moment`` as an aware datetime (naive means UTC), or the current time when None."""
    if moment is None:
        return datetime.now(UTC)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def as_utc(moment: datetime | None) -> datetime | None:
    """An aware UTC datetime (SQLite returns naive ones; everything stored is UTC)."""
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
