"""``cycle_send_to_user``: one short message the cycle leaves for a private chat's user
(``consolidation.allow_send_to_user``; offered in a private chat only). It is stored on the desk
(``CycleDesk.message_to_user``), delivered by the bot in that private chat only; a second call is
refused. The text is at most ``SEND_MAX_CHARS`` characters, taken whole by admission, naming no
opted-out user and no forgotten fact."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...domain.cycle_rules import SEND_MAX_CHARS
from ...domain.governance import OTHER_OPTED_OUT_MESSAGE
from ...domain.records import normalise_text
from ...llm.agent_types import AgentTool
from ...logs import log_event
from ..switches import switch_state
from .arguments import SendArguments
from .common import admission_refusal, refusal, tool
from .desk import CycleDesk

if TYPE_CHECKING:
    from ..service import CognitionEngine


def send_tools(engine: CognitionEngine, desk: CycleDesk) -> list[AgentTool]:
    if not desk.allow_send_to_user or desk.scope.is_group:
        return []

    async def send(args: SendArguments) -> str:
        if desk.message_to_user is not None:
            return refusal("本次整理已经留过一条消息，不能再发")
        text = normalise_text(args.text)
        if not text:
            return refusal("消息不能为空")
        if len(text) > SEND_MAX_CHARS:
            return refusal(f"消息最多 {SEND_MAX_CHARS} 字（现在 {len(text)} 字）")
        why = await admission_refusal(text)
        if why:
            return refusal(why)
        switches = await switch_state(engine, desk.bot_id)
        if switches.is_opted_out(desk.scope.id) or switches.touches_opted_out((), (text,)):
            return refusal(OTHER_OPTED_OUT_MESSAGE)
        if await engine.governance.barred_in(desk.bot_id, desk.scope, [text]):
            return refusal("消息包含此前被要求遗忘的内容，不能发送")
        desk.message_to_user = text
        log_event("cycle_message", bot=desk.bot_id, scope=desk.scope.key, chars=len(text))
        return "消息已排队，将在本私聊中发给用户"

    return [
        tool(
            engine,
            desk,
            "cycle_send_to_user",
            f"给本私聊的用户留一条简短消息（不超过 {SEND_MAX_CHARS} 字，每次整理最多一条；没有必要就不要发）。",
            SendArguments,
            send,
        )
    ]
