"""Driving the real Amrita chat flow with OneBot V11 events (nonebug)."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

from nonebot.adapters.onebot.v11 import Bot, GroupMessageEvent, Message, PrivateMessageEvent
from nonebot.adapters.onebot.v11.event import Sender

SELF_ID = 42
_message_ids = itertools.count(1000)


def group_message(
    text: str, group_id: int, user_id: int, name: str = "", role: str = "member", to_me: bool = True
) -> GroupMessageEvent:
    return GroupMessageEvent(
        time=int(time.time()),
        self_id=SELF_ID,
        post_type="message",
        sub_type="normal",
        user_id=user_id,
        message_type="group",
        message_id=next(_message_ids),
        group_id=group_id,
        message=Message(text),
        original_message=Message(text),
        raw_message=text,
        font=0,
        sender=Sender(user_id=user_id, nickname=name or f"用户{user_id}", card="", role=role),
        to_me=to_me,
    )


def private_message(text: str, user_id: int, name: str = "") -> PrivateMessageEvent:
    return PrivateMessageEvent(
        time=int(time.time()),
        self_id=SELF_ID,
        post_type="message",
        sub_type="friend",
        user_id=user_id,
        message_type="private",
        message_id=next(_message_ids),
        message=Message(text),
        original_message=Message(text),
        raw_message=text,
        font=0,
        sender=Sender(user_id=user_id, nickname=name or f"用户{user_id}"),
        to_me=True,
    )


class FakeQQ:
    """A permissive OneBot API: records what the bot sends, answers the lookups the flow makes."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._message_id = 5000

    async def call_api(self, bot: Bot, api: str, **data: Any) -> Any:
        self.calls.append((api, data))
        if api == "get_group_member_info":
            return {
                "user_id": data["user_id"],
                "group_id": data["group_id"],
                "nickname": "x",
                "card": "",
                "role": "member",
            }
        if api == "get_friend_list":
            return []
        if api in ("send_msg", "send_group_msg", "send_private_msg"):
            self.sent.append(_as_read(data.get("message")))
            self._message_id += 1
            return {"message_id": self._message_id}
        return {}

    async def send(self, event: Any, message: Any, **kwargs: Any) -> dict[str, int]:
        self.sent.append(_as_read(message))
        self._message_id += 1
        return {"message_id": self._message_id}


def _as_read(message: Any) -> str:
    """A sent message as the chat shows it: the quote of the message it answers is no text of its own."""
    from nonebot.adapters.onebot.v11 import Message, MessageSegment

    if not isinstance(message, (Message, MessageSegment)):
        return str(message)
    return "".join(
        segment.data["text"] if segment.is_text() else str(segment) for segment in Message(message).exclude("reply")
    )


class _OpenBucket:
    def consume(self, *args: Any, **kwargs: Any) -> bool:
        return True


def attach(bot: Bot, monkeypatch: Any) -> FakeQQ:
    """Stub the QQ side and lift Amrita's per-chat command rate limit (tests type fast)."""
    from collections import defaultdict

    from amrita.plugins.manager import checker

    monkeypatch.setattr(checker, "watch_group", defaultdict(_OpenBucket))
    monkeypatch.setattr(checker, "watch_user", defaultdict(_OpenBucket))
    qq = FakeQQ()
    monkeypatch.setattr(bot.adapter, "_call_api", qq.call_api)
    monkeypatch.setattr(bot, "send", qq.send)
    return qq


async def deliver(bot: Bot, event: Any) -> None:
    from nonebot.message import handle_event

    await asyncio.wait_for(handle_event(bot, event), timeout=60)
    from amrita_plugin_cognition.bot.jobs import wait_for_background

    await wait_for_background()


def system_text(body: dict[str, Any]) -> str:
    for message in body.get("messages") or []:
        if message.get("role") == "system":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return ""


def non_system_text(body: dict[str, Any]) -> str:
    return json.dumps([m for m in body.get("messages") or [] if m.get("role") != "system"], ensure_ascii=False)


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in body.get("messages") or [] if m.get("role") == "tool"]


async def memory_engine():  # type: ignore[no-untyped-def]
    """The bot's own engine (started by the plugin at driver startup)."""
    from amrita_plugin_cognition.runtime import get_engine

    return await get_engine()


async def connect_bot(ctx: Any, monkeypatch: Any, self_id: str) -> tuple[Bot, FakeQQ]:
    """A OneBot V11 bot in nonebug's ``ctx`` with the QQ side stubbed. The historian is driven by
    hand in these tests: no timer-run job may take the chat's scripted model answers."""
    from nonebot.adapters.onebot.v11 import Adapter

    adapter = ctx.create_adapter(base=Adapter)
    bot = ctx.create_bot(base=Bot, adapter=adapter, self_id=self_id)
    (await memory_engine()).historian.running = False
    return bot, attach(bot, monkeypatch)


async def grant_node(user_id: str, node: str) -> None:
    """Give a user an Amrita LitePerm permission node (``/lp.user.permission <QQ> set <node> true``)."""
    from amrita.plugins.perm.models import PermissionStorage
    from amrita.plugins.perm.nodelib import Permissions

    store = PermissionStorage()
    data = await store.get_member_permission(user_id, "user")
    permissions = Permissions(data.permissions)
    permissions.set_permission(node, True)
    data.permissions = permissions.dump_data()
    await store.update_member_permission(data)
