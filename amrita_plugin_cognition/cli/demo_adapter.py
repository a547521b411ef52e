"""The demo's QQ side: a OneBot V11 adapter whose API calls a simulated QQ client answers, and
the OneBot V11 event JSON a QQ client would send for each turn of the script."""

from __future__ import annotations

import itertools
from typing import Any

from .demo_script import DemoScript, Turn


def simulated_qq_adapter(script: DemoScript):  # type: ignore[no-untyped-def]
    """An OneBot V11 adapter whose API calls are answered by a simulated QQ client."""
    from nonebot.adapters import Bot
    from nonebot.adapters.onebot.v11 import Adapter, Message

    class SimulatedQQ(Adapter):
        """Answers the bot's API calls the way a OneBot implementation would: messages sent are
        recorded, member and friend look-ups are answered from the script's people."""

        def __init__(self, driver: Any) -> None:
            super().__init__(driver)
            self.sent: list[str] = []
            self._message_ids = itertools.count(70001)

        async def _call_api(self, bot: Bot, api: str, **data: Any) -> Any:
            if api in ("send_msg", "send_group_msg", "send_private_msg"):
                message = data.get("message")
                text = Message(message).extract_plain_text() if message is not None else ""
                self.sent.append(text.strip())
                return {"message_id": next(self._message_ids)}
            if api == "send_group_forward_msg" or api == "send_private_forward_msg":
                for node in data.get("messages") or []:
                    content = (node.get("data") or {}).get("content") if isinstance(node, dict) else None
                    self.sent.append(Message(content).extract_plain_text().strip() if content else "")
                return {"message_id": next(self._message_ids)}
            if api == "get_login_info":
                return {"user_id": script.bot_id, "nickname": script.bot_name}
            if api in ("get_group_member_info", "get_stranger_info"):
                person = script.people.get(int(data.get("user_id", 0)))
                nickname = person.nickname if person else str(data.get("user_id"))
                return {
                    "user_id": data.get("user_id"),
                    "group_id": data.get("group_id"),
                    "nickname": nickname,
                    "card": "",
                    "role": person.role if person else "member",
                }
            if api == "get_friend_list":
                return [{"user_id": person.user_id, "nickname": person.nickname} for person in script.people.values()]
            if api == "get_group_info":
                chat = next(
                    (c for c in script.chats.values() if c.kind == "group" and c.id == data.get("group_id")), None
                )
                return {"group_id": data.get("group_id"), "group_name": chat.label if chat else "", "member_count": 3}
            return {}

    return SimulatedQQ


def event_payload(script: DemoScript, turn: Turn, message_id: int) -> dict[str, Any]:
    """The OneBot V11 JSON a QQ client would send for this turn (group messages @ the bot)."""
    from nonebot.adapters.onebot.v11 import Message, MessageSegment

    text = script.said(turn)
    speaker = turn.speaker
    payload: dict[str, Any] = {
        "time": int(script.moment(turn).timestamp()),
        "self_id": script.bot_id,
        "post_type": "message",
        "message_id": message_id,
        "user_id": speaker.user_id,
        "font": 0,
    }
    if turn.chat.kind == "group":
        message = Message([MessageSegment.at(script.bot_id), MessageSegment.text(f" {text}")])
        payload.update(
            message_type="group",
            sub_type="normal",
            group_id=turn.chat.id,
            anonymous=None,
            sender={"user_id": speaker.user_id, "nickname": speaker.nickname, "card": "", "role": speaker.role},
        )
    else:
        message = Message(text)
        payload.update(
            message_type="private",
            sub_type="friend",
            sender={"user_id": speaker.user_id, "nickname": speaker.nickname},
        )
    payload["message"] = [{"type": segment.type, "data": dict(segment.data)} for segment in message]
    payload["raw_message"] = str(message)
    return payload
