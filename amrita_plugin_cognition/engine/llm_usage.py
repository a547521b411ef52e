"""The plugin's LLM calls counted where every process adds up: each finished call of the gateway
(historian, card merges; in the bot or the CLI) adds its counters to its day and purpose in SQL
(``store/llm_usage.py``, one upsert, off the chat's path), and ``status`` reads today's and the
totals from there, so the CLI shows the bot's calls, not its own."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from ..domain.clock import UTC
from ..store import llm_usage as store

if TYPE_CHECKING:
    from ..llm.gateway import PurposeCounters
    from .service import CognitionEngine


def _today(engine: CognitionEngine, now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).astimezone(ZoneInfo(engine.config.timezone)).date().isoformat()


async def record(engine: CognitionEngine, purpose: str, usage: PurposeCounters) -> None:
    """Add one call's counters to today's row of its purpose (the gateway's ``usage_sink``)."""
    now = datetime.now(UTC)
    async with engine.unit_of_work() as uow:
        await store.add(uow.session, _today(engine, now), purpose, usage.counts(), usage.last_error, now)
        await uow.commit()


async def summary(engine: CognitionEngine) -> dict[str, Any]:
    """What ``status`` shows of the LLM: the settings, today's calls per purpose and in all, and
    every call since the first one counted; of every process that shares the database."""
    today = _today(engine)
    async with engine.unit_of_work() as uow:
        found = await store.usage(uow.session, today)
    settings = engine.config.llm
    day_total = {name: sum(int(counters[name]) for counters in found.today.values()) for name in store.COUNTERS}
    return {
        "scope": "all_processes",
        "preset": settings.preset,
        "timeout_seconds": settings.timeout_seconds,
        "max_retries": settings.max_retries,
        "day": today,
        "purposes": found.today,
        "today": day_total,
        "total": found.total,
        "since": found.since or None,
    }
