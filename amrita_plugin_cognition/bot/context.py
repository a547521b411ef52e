"""Resolve who is talking where from the OneBot event: the only source of scope and identity."""

from __future__ import annotations

import logging
from datetime import datetime

from nonebot import get_driver
from nonebot.adapters.onebot.v11 import Bot, GroupMessageEvent, MessageEvent

from ..api import UTC, ChatContext, Scope

logger = logging.getLogger("cognition")


#: Amrita LitePerm node of this plugin: its holders moderate memories and memos like a group
#: admin (``/lp.user.permission <QQ号> set cognition.admin true``). Granted to a chat group
#: (``/lp.chat_group.permission <群号> set cognition.admin true``), every member of that group holds it there.
COGNITION_ADMIN_NODE = "cognition.admin"
LP_ADMIN_NODE = "lp.admin"
#: Amrita LitePerm node that lets its holder read the knowledge base through the chat tools
#: (``/lp.user.permission <QQ号> set cognition.knowledge true``); SUPERUSERS and ``lp.admin``
#: always hold it.
KNOWLEDGE_NODE = "cognition.knowledge"

#: Whether the "LitePerm unavailable" warning was logged (once per process).
_perm_warned = False


def _perm_unavailable(reason: str) -> None:
    global _perm_warned
    if _perm_warned:
        logger.debug("[cognition] stage=permissions liteperm_unavailable=%s", reason)
        return
    _perm_warned = True
    logger.warning(
        "[cognition] stage=permissions liteperm_unavailable=%s; permission nodes (%s, %s) are not checked, "
        "group roles and SUPERUSERS still apply (logged once)",
        reason,
        LP_ADMIN_NODE,
        COGNITION_ADMIN_NODE,
    )


async def has_perm_node(event: MessageEvent, *nodes: str) -> bool:
    """Whether the sender holds one of ``nodes`` in Amrita's LitePerm (as a user, or through the
    group the message was sent in). False, with one warning per process, when LitePerm is
    disabled (its ``enable = false``), not loaded or failing."""
    try:
        from amrita.plugins.perm.API.rules import any_has_permission
        from amrita.plugins.perm.config import DataManager

        if not DataManager().config.enable:
            _perm_unavailable("disabled")
            return False
        for node in nodes:
            if await any_has_permission(node)(event):
                return True
        return False
    except Exception as error:  # the perm plugin may be missing, unconfigured or its tables absent
        _perm_unavailable(f"{type(error).__name__}: {str(error)[:200]}")
        return False


async def is_bot_admin(event: MessageEvent) -> bool:
    """SUPERUSERS, or holders of Amrita's ``lp.admin`` or this plugin's ``cognition.admin`` node:
    they moderate the memories and memo of any group they are in, like its admins."""
    if event.get_user_id() in get_driver().config.superusers:
        return True
    return await has_perm_node(event, LP_ADMIN_NODE, COGNITION_ADMIN_NODE)


async def may_read_knowledge(event: MessageEvent) -> bool:
    """Whether the sender may read the knowledge base: SUPERUSERS, ``lp.admin`` or
    ``cognition.knowledge`` (as a user, or through the group the message was sent in)."""
    if event.get_user_id() in get_driver().config.superusers:
        return True
    return await has_perm_node(event, LP_ADMIN_NODE, KNOWLEDGE_NODE)


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
