"""When a fact happened, kept as precisely as it was said: a day, a month or a year. Pure, no I/O.

A fact's ``happened_at`` is one instant: for a date said without a time it is noon (in the zone
of the chat's clock) of the first day of what was said, and the source notes the precision
(``source["happened"]``: ``day``, ``month`` or ``year``). Without a precision the instant is an
exact time (a conversation turn's). Everything that shows the time (the injected block, the
chat commands, the tools, the CLI) shows it at that precision, in the configured zone:
``2027-01`` for a month (never ``2027-01-01``), ``2026-11-30`` for a day (never ``04:00:00``,
the UTC of its noon), ``2026-11-30 19:05`` for an exact time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timezone, tzinfo

from .records import StrEnum

#: Where the precision is kept in a fact's ``source``.
SOURCE_KEY = "happened"
_STATED = re.compile(r"\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?\s*")


class Precision(StrEnum):
    DAY = "day"
    MONTH = "month"
    YEAR = "year"


@dataclass(frozen=True, slots=True)
class Happened:
    """The instant stored (``happened_at``) and how precisely it was said."""

    at: datetime
    precision: Precision


def precision_of(source: Mapping[str, object]) -> Precision | None:
    """The precision a stored fact's date was said with (None: an exact time, or no date)."""
    try:
        return Precision(str(source.get(SOURCE_KEY)))
    except ValueError:
        return None


def stated(text: str) -> tuple[date, Precision] | None:
    """A date as written: ``2027-01-05`` (a day), ``2027-01`` (a month), ``2027`` (a year)."""
    found = _STATED.fullmatch(text or "")
    if found is None:
        return None
    year, month, day = found.group(1), found.group(2), found.group(3)
    try:
        first = date(int(year), int(month or 1), int(day or 1))
    except ValueError:
        return None
    precision = Precision.DAY if day else Precision.MONTH if month else Precision.YEAR
    return first, precision


def _noon(day: date, zone: tzinfo | None) -> datetime:
    return datetime(day.year, day.month, day.day, 12, tzinfo=zone or timezone.utc)


#: The resolver's granularities a fact's date can be kept at. A week has no precision of its own
#: (a day would claim too much, a month may be wrong at its edges): a fact about one keeps no date
#: and its text says the week (2026-12-07至2026-12-13).
_PRECISIONS = {"day": Precision.DAY, "month": Precision.MONTH, "year": Precision.YEAR}


def from_mention(first: date, granularity: str, zone: tzinfo | None, last: date | None = None) -> Happened | None:
    """The event date of a resolved time mention (its first day, how much of it is known, the last
    day of a span), at the precision it was said with; None when no precision says it: a week, or
    a span of several days (neither is one day). The one conversion the historian's facts and a
    correction's text both go through."""
    precision = _PRECISIONS.get(granularity)
    if precision is None or (precision is Precision.DAY and last is not None and last != first):
        return None
    return Happened(_noon(first, zone), precision)


def when_happened(stated_text: str, sources: Iterable[tuple[str, datetime]], zone: tzinfo | None) -> Happened | None:
    """The date a fact was said to happen: ``stated_text`` (the model's ``happened_on``) if it is
    a date, else the first date the time resolver finds in the sources (a text and when it was
    said), each at the precision it was said with (a month stays a month; a week keeps no date:
    ``from_mention``)."""
    from .timeresolve import resolve_times  # the resolver's tables: only where a date is looked for

    given = stated(stated_text)
    if given is not None:
        return Happened(_noon(given[0], zone), given[1])
    for text, said_at in sources:
        mentions = resolve_times(text, said_at)
        if mentions:
            mention = mentions[0]
            return from_mention(mention.date, mention.granularity, zone, mention.end_date)
    return None


def label(moment: datetime, precision: Precision | None, zone: tzinfo, now: datetime | None = None) -> str:
    """``moment`` as shown at its precision in ``zone``; with ``now`` a day or an exact time of
    the current year drops its year (``11-27``, the chat lists' short form)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    local = moment.astimezone(zone)
    if precision is Precision.YEAR:
        return f"{local.year}"
    if precision is Precision.MONTH:
        return f"{local.year}-{local.month:02d}"
    this_year = now is not None and now.astimezone(zone).year == local.year
    if precision is Precision.DAY:
        return local.strftime("%m-%d" if this_year else "%Y-%m-%d")
    return local.strftime("%m-%d %H:%M" if this_year else "%Y-%m-%d %H:%M")
