"""``/profile`` (alias ``/cogprofile``): the caller's card, or the group's card.

``/profile`` shows the caller's own card: in a group the one part that group sees
(``domain/profile_access.card_access``: under the ``strict`` scope policy their part in this
group, built from this group's facts only; under ``open`` their cross-group part; a private part
is never printed into a group), in a private chat the private part, else the cross-group one,
else the newest of their parts in a group (``profile_access.shown_part``).
``/profile group`` shows the group's card (in a group). The card is shown in the order meta
(who, name, tags, when) → evaluation → roast → body: as an image when nonebot-plugin-htmlrender
is installed and renders (the ``image`` extra; ``profile_image``), else, and whenever rendering
fails, as text (``render_text``). Refusals and usage are always text.
"""

from __future__ import annotations

import asyncio
import logging

from nonebot import on_command
from nonebot.adapters.onebot.v11 import Bot, Message, MessageEvent, MessageSegment
from nonebot.matcher import Matcher
from nonebot.params import CommandArg

from ..api import SECTION_NAMES, Card, ChatContext, CognitionEngine, clean_text, shown_part
from ..errors import CognitionError
from ..runtime import get_engine
from . import profile_image
from .commands import INTERNAL_ERROR_MESSAGE, TIMEOUT_MESSAGE, _menu_state
from .commands_labels import zone_of
from .context import chat_context

logger = logging.getLogger("cognition")

NO_CARD = "还没有画像"
USAGE = (
    "画像命令用法（/profile 也可写作 /cogprofile）：\n/profile — 查看我的画像\n/profile group — 查看本群的画像（群里）"
)

#: Amrita's menu entry of the matcher (``amrita.plugins.menu.models.MatcherData`` fields).
MENU_ENTRY: dict[str, object] = {
    "name": "画像",
    "description": "查看机器人对你或本群整理的画像（评价、吐槽、正文）",
    "usage": [
        "/profile — 我的画像（群里只显示本群能看的部分；私聊显示仅私聊部分，没有时显示跨群部分或最近的群内部分）",
        "/profile group — 本群的画像（群里）",
        "/cogprofile — /profile 的别名",
    ],
    "related": "长期记忆",
    "show_if": None,
}

profile_command = on_command("profile", aliases={"cogprofile"}, priority=5, block=True, state=_menu_state(MENU_ENTRY))

#: Sections in the order the reply shows them (after the meta lines), the image's order too.
SHOWN_SECTIONS = profile_image.SHOWN_SECTIONS


def render_text(card: Card, timezone: str) -> str:
    """A card as a chat reply: meta → evaluation → roast → body."""
    lines = [card.label]
    if card.name:
        lines.append(f"名称：{card.name}")
    if card.tags:
        lines.append(f"标签：{'、'.join(card.tags)}")
    lines.append(f"更新于：{card.updated_at.astimezone(zone_of(timezone)).strftime('%Y-%m-%d %H:%M')}")
    for section in SHOWN_SECTIONS:
        text = getattr(card, section).strip()
        if text:
            lines.append(f"【{SECTION_NAMES[section]}】\n{text}")
    return "\n".join(lines)


async def visible_card(engine: CognitionEngine, context: ChatContext, target: str) -> Card | None:
    """The card ``/profile [group]`` may show in this chat (see the module docstring): the first
    part ``card_access`` allows that exists."""
    if target == "group":
        return await engine.profiles.get(context.bot_id, "group", context.scope.id)
    cards = {
        card.part: card
        for card in await engine.profiles.get_parts(context.bot_id, "user", context.user_id)
        if not card.is_empty
    }
    part = shown_part(context, engine.config.scope_policy, {part: card.updated_at for part, card in cards.items()})
    return cards[part] if part is not None else None


async def lookup(engine: CognitionEngine, bot: Bot | None, event: MessageEvent, words: list[str]) -> str | Card:
    """What ``/profile <words>`` shows: the card, or a refusal or usage text."""
    target = words[0].lower() if words else ""
    if target not in ("", "group") or len(words) > 1:
        return USAGE
    context = await chat_context(bot, event, with_permissions=False)
    if target == "group" and not context.scope.is_group:
        return "这是私聊，没有群画像；请在群里使用 /profile group"
    if not await engine.governance.memory_on(context.bot_id, context.scope):
        return "本会话的记忆已关闭"
    card = await visible_card(engine, context, target)
    if card is None or card.is_empty:
        return NO_CARD
    return card


async def answer(engine: CognitionEngine, bot: Bot | None, event: MessageEvent, words: list[str]) -> str:
    """The text reply to ``/profile <words>``; refusals are answers too."""
    found = await lookup(engine, bot, event, words)
    return found if isinstance(found, str) else render_text(found, engine.config.timezone)


async def card_reply(card: Card, timezone: str) -> MessageSegment | str:
    """The card as an image when htmlrender renders it, else as text (never raises)."""
    image = await profile_image.render_card_image(card, timezone)
    return MessageSegment.image(image) if image is not None else render_text(card, timezone)


async def handle(bot: Bot, event: MessageEvent, matcher: Matcher, argument: Message = CommandArg()) -> None:  # noqa: B008
    """Every ``/profile`` command gets one reply: the card is found within ``tool_timeout_seconds``,
    then drawn within ``profile_image.RENDER_TIMEOUT_SECONDS`` (or sent as text)."""
    words = clean_text(argument.extract_plain_text()).split()
    reply: MessageSegment | str
    try:
        engine = await get_engine()
        if not engine.config.enable:
            reply = "记忆功能已被管理员关闭"
        else:
            found = await asyncio.wait_for(
                lookup(engine, bot, event, words), timeout=engine.config.tool_timeout_seconds
            )
            reply = found if isinstance(found, str) else await card_reply(found, engine.config.timezone)
    except (asyncio.TimeoutError, TimeoutError):  # distinct classes before Python 3.11
        logger.warning("[cognition] stage=command action=profile timeout; the command did not finish")
        reply = TIMEOUT_MESSAGE
    except CognitionError as error:
        logger.info("[cognition] stage=command action=profile refused=%s", str(error)[:300])
        reply = error.zh
    except Exception:
        logger.exception("[cognition] stage=command action=profile failed")
        reply = INTERNAL_ERROR_MESSAGE
    await matcher.finish(reply)


profile_command.handle()(handle)
profile_image.load_htmlrender()  # with the bot, when installed: its startup/shutdown hooks must run
