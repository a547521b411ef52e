"""Resolve who is talking where from the OneBot event: the only source of scope and identity."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from nonebot import get_driver
from nonebot.adapters.onebot.v11 import Bot, GroupMessageEvent, MessageEvent

from ..domain.records import ChatContext, Scope

logger = logging.getLogger("cognition")


async def is_bot_admin(event: MessageEvent) -> bool:
    """SUPERUSERS, or holders of Amrita's ``lp.admin`` permission node."""
    user_id = event.get_user_id()
    if user_id in get_driver().config.superusers:
        return True
    try:
        from amrita.plugins.perm.API.admin import is_lp_admin

        return bool(await is_lp_admin(event))
    except Exception as error:  # the perm plugin may be disabled or unconfigured
        logger.warning("[cognition] stage=permissions lp_admin_check_failed=%s", str(error)[:200])
        return False


async def group_role(bot: Bot | None, event: MessageEvent) -> str:
    if not isinstance(event, GroupMessageEvent):
        return ""
    role = getattr(event.sender, "role", None) or ""
    if role or bot is None:
        return role or "member"
    try:
        info = await bot.get_group_member_info(group_id=event.group_id, user_id=event.user_id)
        return str(info.get("role") or "member")
    except Exception as error:  # the QQ side may refuse; treat as a plain member
        logger.warning("[cognition] stage=permissions member_info_failed=%s", str(error)[:200])
        return "member"


def message_time(event: MessageEvent) -> datetime:
    """When the message was sent (the OneBot event's ``time``): the "now" of its turn.

    Writes made while answering it carry this time, and recall measures recency from it, so a
    message answered late, replayed or simulated is anchored to when it was said.
    """
    stamp = getattr(event, "time", 0)
    if isinstance(stamp, int | float) and stamp > 0:
        if stamp > 100_000_000_000:  # milliseconds (some OneBot implementations), not seconds
            stamp = stamp / 1000
        try:
            return datetime.fromtimestamp(stamp, UTC)
        except (OverflowError, OSError, ValueError):
            logger.warning("[cognition] stage=event bad_time=%r; using the current time", stamp)
    return datetime.now(UTC)


def scope_of(event: MessageEvent) -> Scope:
    if isinstance(event, GroupMessageEvent):
        return Scope("group", str(event.group_id))
    return Scope("private", str(event.user_id))


def display_name(event: MessageEvent) -> str:
    sender = event.sender
    return (getattr(sender, "card", None) or getattr(sender, "nickname", None) or str(event.user_id)).strip()


async def chat_context(bot: Bot | None, event: MessageEvent, *, with_permissions: bool = True) -> ChatContext:
    return ChatContext(
        bot_id=str(event.self_id),
        scope=scope_of(event),
        user_id=str(event.user_id),
        user_name=display_name(event),
        group_role=await group_role(bot, event) if with_permissions else "",
        is_bot_admin=await is_bot_admin(event) if with_permissions else False,
    )
