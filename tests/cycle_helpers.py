"""Calling the consolidation cycle's tools as the agent's driver does: the tools of a desk by
name, each called with its arguments validated by its own model (no model needed)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from engine_helpers import NOW
from sqlalchemy import select

from amrita_plugin_cognition.domain.records import Importance, MemoryDraft, Scope
from amrita_plugin_cognition.engine.consolidation import PrepassReport
from amrita_plugin_cognition.engine.cycle_tools import CycleDesk, cycle_tools
from amrita_plugin_cognition.engine.service import CognitionEngine
from amrita_plugin_cognition.llm.agent_types import AgentTool
from amrita_plugin_cognition.store.models import MemoryRow


def desk_of(
    bot: str,
    scope: Scope,
    *,
    prepass: PrepassReport | None = None,
    last_cycle_at: datetime | None = None,
    last_summary: str = "",
    allow_send_to_user: bool = False,
    now: datetime = NOW,
) -> CycleDesk:
    return CycleDesk(
        bot_id=bot,
        scope=scope,
        now=now,
        last_cycle_at=last_cycle_at,
        last_summary=last_summary,
        prepass=prepass or PrepassReport(bot, scope),
        allow_send_to_user=allow_send_to_user,
    )


class Tools:
    """The tools of one run, called by name with keyword arguments."""

    def __init__(self, engine: CognitionEngine, desk: CycleDesk) -> None:
        self.desk = desk
        self.by_name: dict[str, AgentTool] = {tool.name: tool for tool in cycle_tools(engine, desk)}

    async def __call__(self, name: str, **arguments: Any) -> str:
        tool = self.by_name[name]
        return await tool.handler(tool.arguments.model_validate(arguments))


async def write(
    engine: CognitionEngine,
    bot: str,
    scope: Scope,
    text: str,
    speaker: str = "10001",
    at: datetime = NOW,
    **fields: Any,
) -> int:
    draft = MemoryDraft(text=text, scope=scope, speaker_id=speaker, speaker_name=f"用户{speaker}", **fields)
    result = await engine.memories.remember(bot, [draft], now=at)
    assert result.written, result.refused
    return result.written[0].id


async def row(engine: CognitionEngine, memory_id: int) -> MemoryRow | None:
    async with engine.session() as session:
        return (await session.execute(select(MemoryRow).where(MemoryRow.id == memory_id))).scalar_one_or_none()


__all__ = ["NOW", "Importance", "Tools", "desk_of", "row", "write"]
