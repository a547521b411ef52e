"""The LLM usage counters in SQL (``cognition_llm_usage``): one atomic upsert per call, so two
processes counting the same day and purpose never lose each other's calls; read back summed for
``status``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from .models import LLMUsageRow

#: The summed columns, as the gateway counts them.
COUNTERS = (
    "calls",
    "failures",
    "retries",
    "timeouts",
    "invalid_outputs",
    "prompt_tokens",
    "completion_tokens",
    "latency_ms",
)


async def add(
    session: AsyncSession, day: str, purpose: str, counts: dict[str, int], last_error: str, now: datetime
) -> None:
    """Add one call's counts to (day, purpose), creating the row on the day's first call."""
    insert = postgresql_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    values = {name: int(counts.get(name, 0)) for name in COUNTERS}
    statement = insert(LLMUsageRow).values(
        day=day, purpose=purpose[:32], last_error=last_error, updated_at=now, **values
    )
    updates: dict[str, Any] = {name: getattr(LLMUsageRow, name) + statement.excluded[name] for name in COUNTERS}
    updates["updated_at"] = statement.excluded.updated_at
    if last_error:
        updates["last_error"] = statement.excluded.last_error
    await session.execute(statement.on_conflict_do_update(index_elements=["day", "purpose"], set_=updates))


@dataclass(slots=True)
class Usage:
    #: purpose -> counters of ``day``
    today: dict[str, dict[str, Any]]
    #: counters summed over every day
    total: dict[str, int]
    #: the first day counted ("" when nothing was)
    since: str


async def usage(session: AsyncSession, day: str) -> Usage:
    rows = (await session.execute(select(LLMUsageRow).where(LLMUsageRow.day == day))).scalars()
    today = {
        row.purpose: {**{name: getattr(row, name) for name in COUNTERS}, "last_error": row.last_error} for row in rows
    }
    sums = (
        await session.execute(
            select(
                func.min(LLMUsageRow.day),
                *(func.coalesce(func.sum(getattr(LLMUsageRow, name)), 0) for name in COUNTERS),
            )
        )
    ).one()
    return Usage(today, {name: int(value) for name, value in zip(COUNTERS, sums[1:], strict=True)}, sums[0] or "")
