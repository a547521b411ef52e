"""``/memory`` (alias ``/cogmem``): what users and group admins can see and delete themselves,
the chat's memory switch (``off``/``on``) and each user's opt-out (``optout``/``optin``).

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

from ..api import ChatContext, CognitionEngine, MemoryRecord, clean_text
from ..errors import CognitionError, InvalidInput
from ..runtime import get_engine
from . import commands_decay as decay
from . import commands_governance as governance
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
    "/memory user show <编号> — 查看一条记忆的来源与更正记录\n"
    "/memory user delete <编号> — 删除我的一条记忆（需回复“确认”）\n"
    "/memory user clear — 删除我在所有会话中的全部记忆（需回复“确认”）\n"
    "/memory group list [页码] — 列出本群记忆（群里）\n"
    "/memory group search <关键词> — 搜索本群记忆（群里）\n"
    "/memory group show <编号> — 查看本群一条记忆的来源与更正记录\n"
    "/memory group delete <编号> — 删除本群一条记忆（本人、群管理员/群主、"
    f"机器人管理员或持有 {COGNITION_ADMIN_NODE} 权限者；需回复“确认”）\n"
    "/memory group clear — 删除本群的全部记忆（群管理员/群主或机器人管理员；需回复“确认”）\n"
    "/memory bot clear — 删除机器人的全部记忆（机器人管理员，私聊；需回复“确认”）\n"
    "/memory memo — 查看本会话的置顶备忘录\n"
    "/memory off | on — 关闭/开启本会话的记忆（群里需群管理员、群主或机器人管理员）\n"
    "/memory optout | optin — 在所有会话里不再记录关于我的新内容 / 恢复\n"
    "/memory keep <编号> | unkeep <编号> — 让一条记忆不会因时间过期 / 取消（本人、群管理员/群主或机器人管理员）\n"
    "/memory expired [页码] — 本会话已过期的记忆（群管理员/群主或机器人管理员；私聊里本人）\n"
    "/memory restore <编号> — 恢复一条过期的记忆（同上）"
)

#: Amrita's menu entry of each matcher (``amrita.plugins.menu.models.MatcherData`` fields).
MENU_ENTRY: dict[str, object] = {
    "name": "长期记忆",
    "description": "查看、搜索、删除机器人记住的事；查看置顶备忘录；开关本会话的记忆；选择不被记住",
    "usage": [
        "/memory — 显示用法",
        "/memory user list [页码] | search <关键词> — 我的记忆（仅私聊）",
        "/memory user show | delete <编号>、/memory user clear — 查看来源、删除一条、删除全部",
        "/memory group list [页码] | search <关键词> | show | delete <编号> | clear — 本群记忆",
        "/memory bot clear — 删除机器人的全部记忆（机器人管理员）；删除都需回复“确认”",
        "/memory memo — 本会话置顶备忘录",
        "/memory off | on — 关闭/开启本会话的记忆（群里需群管理员/群主或机器人管理员）",
        "/memory optout | optin — 不再记录关于我的新内容（所有会话）/ 恢复",
        "/memory keep | unkeep <编号> — 让一条记忆不会过期 / 取消",
        "/memory expired [页码]、/memory restore <编号> — 本会话过期的记忆，恢复一条（管理员）",
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


def memory_number(text: str, example: str) -> int:
    """The memory's number a command names (``parse_number``); asked for when missing."""
    if not text:
        raise InvalidInput(f"请提供记忆编号，例如 {example}")
    return parse_number(text, what="记忆编号", example=example, maximum=DATABASE_ID_MAX)


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
    records, total = await engine.memories.list(context, target, (page - 1) * PAGE_SIZE, PAGE_SIZE)  # type: ignore[arg-type]
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
    found = await engine.memories.search(context, query, target)  # type: ignore[arg-type]
    note = "（向量检索暂不可用，只按字词匹配）" if found.mode != "full" else ""
    if not found.hits:
        return f"没有找到与{_quoted(query)}相关的记忆{note}"
    shown = found.hits[:PAGE_SIZE]
    more = f"，显示前 {len(shown)} 条" if len(found.hits) > len(shown) else ""
    header = f"与{_quoted(query)}相关的记忆（{len(found.hits)} 条{more}）{note}："
    return "\n".join([header, *await _lines(engine, bot, context, [hit.record for hit in shown])])


async def _switch(engine: CognitionEngine, context: ChatContext, word: str) -> str:
    """``off``/``on`` for the chat (who may: ``domain/permissions.py``), ``optout``/``optin`` for the speaker."""
    if word in ("optout", "optin"):
        change = await engine.governance.set_opt_out(context.bot_id, context.user_id, word == "optout", context)
        if word == "optin":
            return "已为你恢复记忆：之后关于你的内容会照常记录。" if change.changed else "你没有关闭过记忆，无需恢复。"
        if not change.changed:
            return "你已经选择了不被记住；发送 /memory optin 可恢复。"
        return (
            "已为你关闭记忆：从现在起，在所有会话里都不会再记录关于你的新内容（包括你自己说的话）；"
            "已有记忆保留，可私聊我用 /memory user list 查看、/memory user delete 删除。发送 /memory optin 可恢复。"
        )
    place, inside = ("本群", "本群") if context.scope.is_group else ("我们私聊", "这段私聊")
    change = await engine.governance.switch_chat_memory(context, word == "on")
    if word == "off":
        if not change.changed:
            return f"{place}的记忆已经是关闭的；发送 /memory on 重新开启。"
        return (
            f"{place}的记忆已关闭：关闭期间不会记录、注入或整理{inside}的任何内容；已有记忆保留。"
            "发送 /memory on 重新开启。"
        )
    reply = f"{place}的记忆已开启：之后的对话会照常记录和使用。" if change.changed else f"{place}的记忆本来就是开启的。"
    if context.scope.key in engine.config.disabled_scopes:
        reply += "不过管理员在配置里关闭了本会话的记忆，目前仍不会记录或使用。"
    return reply


async def _decay(engine: CognitionEngine, bot: Bot | None, context: ChatContext, word: str, number: str) -> str:
    """``expired [页码]``, ``restore|keep|unkeep <编号>`` (``commands_decay.py``)."""
    if word == "expired":
        page = parse_number(number, what="页码", example="/memory expired 2", maximum=PAGE_MAX) if number else 1
        return await decay.expired(engine, bot, context, page)
    memory_id = memory_number(number, f"/memory {word} 12")
    if word == "restore":
        return await decay.restore(engine, context, memory_id)
    return await decay.keep(engine, context, memory_id, word == "keep")


#: Words that ask for the usage text (as does ``/memory`` alone).
HELP_WORDS = frozenset({"help", "-h", "--help", "帮助", "用法", "?", "？"})
TARGETS = ("user", "group", "memo", "bot")
#: One-word commands: the chat's switch and the speaker's own opt-out.
SWITCH_WORDS = ("off", "on", "optout", "optin")
ACTIONS = ("list", "search", "show", "delete", "clear")
#: The decay sweep's commands (``commands_decay.py``): a page, or a memory's number, after them.
DECAY_WORDS = ("expired", "restore", "keep", "unkeep")


def usage_reply(words: list[str]) -> str | None:
    """The usage text when ``words`` ask for it or are no command at all (else None): answered
    before the engine or the QQ side is asked anything, so it works even while memory is down."""
    if not words or words[0].lower() in HELP_WORDS:
        return USAGE
    target = words[0]
    if target.lower() in SWITCH_WORDS:
        return None if len(words) == 1 else f"/memory {target.lower()} 后面不需要参数。\n{USAGE}"
    if target.lower() in DECAY_WORDS:
        return None if len(words) <= 2 else f"/memory {target.lower()} 后面只写一个数字。\n{USAGE}"
    if target not in TARGETS:
        return f"不认识的子命令“{target[:20]}”。\n{USAGE}"
    action = words[1] if len(words) > 1 else ""
    if target == "bot" and action != "clear":
        return f"/memory bot 后只能写 clear。\n{USAGE}"
    if target != "memo" and action not in ACTIONS:
        return f"请在 /memory {target} 后写 list、search、show、delete 或 clear。\n{USAGE}" if action else USAGE
    return None


async def answer(engine: CognitionEngine, bot: Bot, event: MessageEvent, words: list[str]) -> str:
    """The reply to ``/memory <words>``; refusals are answers too."""
    usage = usage_reply(words)
    if usage is not None:
        return usage
    context = await chat_context(bot, event)
    target, action, rest = words[0], (words[1] if len(words) > 1 else ""), " ".join(words[2:])
    if target.lower() in SWITCH_WORDS:
        return await _switch(engine, context, target.lower())
    if target.lower() in DECAY_WORDS:
        return await _decay(engine, bot, context, target.lower(), action)
    if target == "memo":
        memo = await engine.notes.read_memo(context)
        return f"本会话备忘录：\n{memo}" if memo else "本会话还没有备忘录"
    if target == "user" and context.scope.is_group and action in ("list", "search"):
        return "为保护隐私，个人记忆不会在群里展示，请私聊我使用这个命令"
    if target == "group" and not context.scope.is_group:
        return "这是私聊，没有群记忆；请在群里使用 /memory group …"
    if action == "list":
        return await _list(engine, bot, context, target, rest)
    if action == "search":
        return await _search(engine, bot, context, target, rest)
    message_id = str(getattr(event, "message_id", ""))
    if action == "clear":
        return await governance.ask_clear(engine, context, message_id, target)
    memory_id = memory_number(rest, f"/memory {target} {action} 12")
    if action == "show":
        return await governance.show(engine, context, target, memory_id)
    return await governance.ask_forget(engine, context, message_id, target, memory_id)


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
        if not engine.config.enable and words[0].lower() not in ("optout", "optin"):  # a choice kept for later
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
