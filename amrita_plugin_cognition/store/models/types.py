"""The column types every table shares: UTC datetimes, the id type, the width of a name."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, DateTime, Integer
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from ...domain.clock import UTC

#: The width of every name column (a speaker's, a subject's, a note's or a turn's user, a card's).
#: A QQ group card may be longer, and PostgreSQL refuses a whole write for one name too long.
NAME_COLUMN_CHARS = 128


def fit_name(name: str) -> str:
    """A display name cut to its column."""
    return name[:NAME_COLUMN_CHARS]


class UTCDateTime(TypeDecorator[datetime]):
    """``UTCDateTime()`` whose aware values are converted to UTC before they are bound
    (columns and the values compared with them); naive values are taken as UTC already."""

    impl = DateTime(timezone=True)
    cache_ok = True

    @property
    def python_type(self) -> type[datetime]:
        return datetime

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if isinstance(value, datetime):
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value


# SQLite only auto-increments INTEGER PRIMARY KEY; PostgreSQL gets a BIGINT identity.
ID = BigInteger().with_variant(Integer(), "sqlite")
