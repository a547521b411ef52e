"""An owner's overview (the WebUI's page): the bot accounts that hold facts and one account's chats
with their facts counted by status and whether memory is on there."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..domain.records import MemoryStatus, Scope
from ..store import browse
from .switches import chat_open, switch_state

if TYPE_CHECKING:
    from .service import CognitionEngine


@dataclass(frozen=True, slots=True)
class ChatSummary:
    scope: Scope
    active: int
    expired: int
    superseded: int
    #: Memory is on in this chat (configured on, not in ``disabled_scopes``, not switched off).
    memory_on: bool


async def bot_accounts(engine: CognitionEngine) -> dict[str, int]:
    """Bot account → how many facts it holds (any status)."""
    async with engine.unit_of_work() as uow:
        return await browse.bot_accounts(uow.session)


async def chats(engine: CognitionEngine, bot_id: str) -> list[ChatSummary]:
    """One bot account's chats, the most active facts first."""
    async with engine.unit_of_work() as uow:
        counts = await browse.chat_status_counts(uow.session, bot_id)
        for key in await browse.switched_chats(uow.session, bot_id):
            counts.setdefault(key, {})
    state = await switch_state(engine, bot_id)
    summaries = []
    for (kind, scope_id), by_status in counts.items():
        if kind not in ("group", "private"):
            continue
        scope = Scope(kind, scope_id)  # type: ignore[arg-type]
        summaries.append(
            ChatSummary(
                scope=scope,
                active=by_status.get(MemoryStatus.ACTIVE.value, 0),
                expired=by_status.get(MemoryStatus.EXPIRED.value, 0),
                superseded=by_status.get(MemoryStatus.SUPERSEDED.value, 0),
                memory_on=engine.config.enable and chat_open(engine, state, scope),
            )
        )
    summaries.sort(key=lambda item: (-item.active, item.scope.key))
    return summaries
