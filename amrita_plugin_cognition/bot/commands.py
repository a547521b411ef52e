"""``/memory`` (alias ``/cogmem``): what users and group admins can see and delete themselves.

Personal memories are never printed into a group chat. When amrita-plugin-memory is also
loaded it owns ``/memory``, and this plugin answers to ``/cogmem`` only. Lists show each
memory's date and, in a private chat, the chat it came from (``commands_labels.py``); a search
shows only memories that match (``engine/search.py``). Both matchers carry Amrita's menu data
(``MatcherData`` in the matcher state), which is how they appear in ``/menu``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time

from nonebot import get_plugin, on_command
from nonebot.adapters.onebot.v11 import Bot, Message, MessageEvent
from nonebot.matcher import Matcher
from nonebot.params import CommandArg
from nonebot.rule import Rule

from ..domain.records import ChatContext, MemoryRecord, clean_text
from ..engine import notes
from ..engine.search import search_memories
from ..engine.service import CognitionEngine
from ..errors import CognitionError, InvalidInput
from ..runtime import get_engine
from .commands_labels import record_lines, zone_of
from .context import COGNITION_ADMIN_NODE, chat_context

logger = logging.getLogger("cognition")

PAGE_SIZE = 10
#: Largest id the databases hold (signed 64-bit), and the last page whose offset fits in it.
DATABASE_ID_MAX = 2**63 - 1
PAGE_MAX = DATABASE_ID_MAX // PAGE_SIZE
SEARCH_MAX_CHARS = 200
TIMEOUT_MESSAGE = "记忆服务响应超时，本次操作未完成"
INTERNAL_ERROR_MESSAGE = "记忆服务内部错误，已记录日志；本次操作未完成"
_ASCII_DIGITS = re.compile("[0-9]+")
OTHER_MEMORY_PLUGIN = "amrita_plugin_memory"

USAGE = (
    "记忆命令用法（/memory 也可写作 /cogmem）：\n"
    "/memory user list [页码] — 列出我的记忆（仅私聊）\n"
    "/memory user search <关键词> — 搜索我的记忆（仅私聊）\n"
    "/memory user delete <编号> — 删除我的一条记忆\n"
    "/memory group list [页码] — 列出本群记忆（群里）\n"
    "/memory group search <关键词> — 搜索本群记忆（群里）\n"
    "/memory group delete <编号> — 删除本群一条记忆（本人、群管理员/群主、"
    f"机器人管理员或持有 {COGNITION_ADMIN_NODE} 权限者）\n"
    "/memory memo — 查看本会话的置顶备忘录"
)

#: Amrita's menu entry of each matcher (``amrita.plugins.menu.models.MatcherData`` fields).
MENU_ENTRY: dict[str, object] = {
    "name": "长期记忆",
    "description": "查看、搜索、删除机器人记住的事；查看置顶备忘录",
    "usage": [
        "/memory — 显示用法",
        "/memory user list [页码] | search <关键词> | delete <编号> — 我的记忆（列表、搜索仅私聊）",
        "/memory group list [页码] | search <关键词> | delete <编号> — 本群记忆",
        "/memory memo — 本会话置顶备忘录",
        f"删除他人的群记忆需群管理员/群主、机器人管理员或 {COGNITION_ADMIN_NODE} 权限",
    ],
    "related": None,
    "show_if": None,
}
ALIAS_MENU_ENTRY: dict[str, object] = {
    "name": "cogmem",
    "description": "/memory 的别名；同时装了 amrita-plugin-memory 时请用 /cogmem",
    "usage": "/cogmem user list 等，与 /memory 相同",
    "related": "长期记忆",
    "show_if": None,
}


def _menu_state(entry: dict[str, object]) -> dict[str, object]:
    """The matcher state Amrita's menu reads: every field of its ``MatcherData`` (name, usage,
    description, related, show_if). Its model is not imported here: importing
    ``amrita.plugins.menu`` loads that plugin, which fails where the chat plugins are not loaded."""
    return dict(entry)


def _memory_name_free() -> bool:
    return get_plugin(OTHER_MEMORY_PLUGIN) is None


memory_command = on_command(
    "memory", rule=Rule(_memory_name_free), priority=5, block=True, state=_menu_state(MENU_ENTRY)
)
cogmem_command = on_command("cogmem", priority=5, block=True, state=_menu_state(ALIAS_MENU_ENTRY))


def parse_number(text: str, *, what: str, example: str, maximum: int) -> int:
    """A positive integer written in ASCII digits, at most ``maximum``; else ``InvalidInput``.

    ``str.isdigit`` is not enough: it accepts ``²`` and other digits ``int`` refuses, and an id
    beyond 64 bits overflows the database driver."""
    if not _ASCII_DIGITS.fullmatch(text):
        raise InvalidInput(f"{what}必须是正整数（阿拉伯数字），例如 {example}")
    number = int(text)
    if not 1 <= number <= maximum:
        raise InvalidInput(f"{what}必须在 1 到 {maximum} 之间，例如 {example}")
    return number


async def _lines(
    engine: CognitionEngine, bot: Bot | None, context: ChatContext, records: list[MemoryRecord]
) -> list[str]:
    """One line per memory: its date, and in a private chat the chat it came from."""
    return await record_lines(
        records, zone=zone_of(engine.config.timezone), bot=bot, with_chat=not context.scope.is_group
    )


async def _list(engine: CognitionEngine, bot: Bot | None, context: ChatContext, target: str, page_text: str) -> str:
    page = (
        parse_number(page_text, what="页码", example=f"/memory {target} list 2", maximum=PAGE_MAX) if page_text else 1
    )
    records, total = await engine.list_memories(context, target, (page - 1) * PAGE_SIZE, PAGE_SIZE)  # type: ignore[arg-type]
    if total == 0:
        return "还没有记忆" if target == "user" else "本群还没有记忆"
    pages = (total + PAGE_SIZE - 1) // PAGE_SIZE
    if not records:
        return f"只有 {pages} 页"
    header = f"{'我的' if target == 'user' else '本群'}记忆（第 {page}/{pages} 页，共 {total} 条）"
    return "\n".join([header, *await _lines(engine, bot, context, records)])


def _quoted(query: str) -> str:
    return f"“{query if len(query) <= 20 else query[:19] + '…'}”"


async def _search(engine: CognitionEngine, bot: Bot | None, context: ChatContext, target: str, query: str) -> str:
    if not query:
        return f"请提供搜索关键词，例如 /memory {target} search 火锅"
    if len(query) > SEARCH_MAX_CHARS:
        return f"关键词过长：{len(query)} 字，上限 {SEARCH_MAX_CHARS} 字"
    found = await search_memories(engine, context, query, target)  # type: ignore[arg-type]
    note = "（向量检索暂不可用，只按字词匹配）" if found.mode != "full" else ""
    if not found.hits:
        return f"没有找到与{_quoted(query)}相关的记忆{note}"
    shown = found.hits[:PAGE_SIZE]
    more = f"，显示前 {len(shown)} 条" if len(found.hits) > len(shown) else ""
    header = f"与{_quoted(query)}相关的记忆（{len(found.hits)} 条{more}）{note}："
    return "\n".join([header, *await _lines(engine, bot, context, [hit.record for hit in shown])])


async def _delete(engine: CognitionEngine, context: ChatContext, target: str, id_text: str) -> str:
    example = f"/memory {target} delete 12"
    if not id_text:
        return f"请提供要删除的记忆编号，例如 {example}"
    memory_id = parse_number(id_text, what="记忆编号", example=example, maximum=DATABASE_ID_MAX)
    await engine.forget_memory(context, memory_id)  # who may: domain/permissions.py
    return f"已删除记忆 #{memory_id}，之后不会再被记起"


#: Words that ask for the usage text (as does ``/memory`` alone).
HELP_WORDS = frozenset({"help", "-h", "--help", "帮助", "用法", "?", "？"})
TARGETS = ("user", "group", "memo")
ACTIONS = ("list", "search", "delete")


def usage_reply(words: list[str]) -> str | None:
    """The usage text when ``words`` ask for it or are no command at all (else None): answered
    before the engine or the QQ side is asked anything, so it works even while memory is down."""
    if not words or words[0].lower() in HELP_WORDS:
        return USAGE
    target = words[0]
    if target not in TARGETS:
        return f"不认识的子命令“{target[:20]}”。\n{USAGE}"
    action = words[1] if len(words) > 1 else ""
    if target != "memo" and action not in ACTIONS:
        return f"请在 /memory {target} 后写 list、search 或 delete。\n{USAGE}" if action else USAGE
    return None


async def answer(engine: CognitionEngine, bot: Bot, event: MessageEvent, words: list[str]) -> str:
    """The reply to ``/memory <words>``; refusals are answers too."""
    usage = usage_reply(words)
    if usage is not None:
        return usage
    context = await chat_context(bot, event)
    target, action, rest = words[0], (words[1] if len(words) > 1 else ""), " ".join(words[2:])
    if target == "memo":
        memo = await notes.read_memo(engine, context)
        return f"本会话备忘录：\n{memo}" if memo else "本会话还没有备忘录"
    if target == "user" and context.scope.is_group and action in ("list", "search"):
        return "为保护隐私，个人记忆不会在群里展示，请私聊我使用这个命令"
    if target == "group" and not context.scope.is_group:
        return "这是私聊，没有群记忆；请在群里使用 /memory group …"
    if action == "list":
        return await _list(engine, bot, context, target, rest)
    if action == "search":
        return await _search(engine, bot, context, target, rest)
    return await _delete(engine, context, target, rest)


async def handle(bot: Bot, event: MessageEvent, matcher: Matcher, argument: Message = CommandArg()) -> None:  # noqa: B008
    """Every ``/memory`` command gets one reply, within ``tool_timeout_seconds``."""
    words = clean_text(argument.extract_plain_text()).split()
    started = time.perf_counter()
    timeout = None
    usage = usage_reply(words)
    if usage is not None:
        await matcher.finish(usage)
    try:
        engine = await get_engine()
        if not engine.config.enable:
            reply = "记忆功能已被管理员关闭"
        else:
            timeout = engine.config.tool_timeout_seconds
            reply = await asyncio.wait_for(answer(engine, bot, event, words), timeout=timeout)
    except (asyncio.TimeoutError, TimeoutError):  # distinct classes before Python 3.11
        logger.warning(
            "[cognition] stage=command action=%s timeout_s=%.1f elapsed_ms=%.1f; the command did not finish",
            " ".join(words[:2]),
            timeout or 0.0,
            (time.perf_counter() - started) * 1000,
        )
        reply = TIMEOUT_MESSAGE
    except CognitionError as error:
        logger.info("[cognition] stage=command action=%s refused=%s", " ".join(words[:2]), str(error)[:300])
        reply = error.zh
    except Exception:
        logger.exception("[cognition] stage=command action=%s failed", " ".join(words[:2]))
        reply = INTERNAL_ERROR_MESSAGE
    await matcher.finish(reply)


memory_command.handle()(handle)
cogmem_command.handle()(handle)
