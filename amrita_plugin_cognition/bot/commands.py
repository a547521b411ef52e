"""``/memory`` (alias ``/cogmem``): what users and group admins can see and delete themselves.

Personal memories are never printed into a group chat. When amrita-plugin-memory is also
loaded it owns ``/memory``, and this plugin answers to ``/cogmem`` only.
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
from ..engine.service import CognitionEngine
from ..errors import CognitionError, InvalidInput
from ..runtime import get_engine
from .context import chat_context

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
    "用法：\n"
    "/memory user list [页码] — 列出我的记忆（仅私聊）\n"
    "/memory user search <关键词> — 搜索我的记忆（仅私聊）\n"
    "/memory user delete <编号> — 删除我的一条记忆\n"
    "/memory group list [页码] | search <关键词> | delete <编号> — 本群记忆（删除需群管理员/群主）\n"
    "/memory memo — 查看本会话的置顶备忘录"
)


def _memory_name_free() -> bool:
    return get_plugin(OTHER_MEMORY_PLUGIN) is None


memory_command = on_command("memory", rule=Rule(_memory_name_free), priority=5, block=True)
cogmem_command = on_command("cogmem", priority=5, block=True)


def _line(record: MemoryRecord) -> str:
    when = record.when.strftime("%Y-%m-%d")
    return f"#{record.id} [{when}] {record.text}"


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


async def _list(engine: CognitionEngine, context: ChatContext, target: str, page_text: str) -> str:
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
    return "\n".join([header, *(_line(record) for record in records)])


async def _search(engine: CognitionEngine, context: ChatContext, target: str, query: str) -> str:
    if not query:
        return f"请提供搜索关键词，例如 /memory {target} search 火锅"
    if len(query) > SEARCH_MAX_CHARS:
        return f"关键词过长：{len(query)} 字，上限 {SEARCH_MAX_CHARS} 字"
    result = await engine.recall(context, [query], top_k=50)
    if target == "user":
        hits = [hit for hit in result.hits if context.user_id in (hit.record.speaker_id, hit.record.subject_id)]
    else:
        hits = [hit for hit in result.hits if hit.record.scope == context.scope]
    if not hits:
        return "没有找到相关记忆"
    return "\n".join(["找到的记忆：", *(_line(hit.record) for hit in hits[:PAGE_SIZE])])


async def _delete(engine: CognitionEngine, context: ChatContext, target: str, id_text: str) -> str:
    example = f"/memory {target} delete 12"
    if not id_text:
        return f"请提供要删除的记忆编号，例如 {example}"
    memory_id = parse_number(id_text, what="记忆编号", example=example, maximum=DATABASE_ID_MAX)
    await engine.forget_memory(context, memory_id)  # who may: domain/permissions.py
    return f"已删除记忆 #{memory_id}，之后不会再被记起"


async def answer(engine: CognitionEngine, bot: Bot, event: MessageEvent, words: list[str]) -> str:
    """The reply to ``/memory <words>``; refusals are answers too."""
    context = await chat_context(bot, event)
    if not words:
        return USAGE
    target, action, rest = words[0], (words[1] if len(words) > 1 else ""), " ".join(words[2:])
    if target == "memo":
        memo = await notes.read_memo(engine, context)
        return f"本会话备忘录：\n{memo}" if memo else "本会话还没有备忘录"
    if target not in ("user", "group") or action not in ("list", "search", "delete"):
        return USAGE
    if target == "user" and context.scope.is_group and action in ("list", "search"):
        return "为保护隐私，个人记忆不会在群里展示，请私聊我使用这个命令"
    if target == "group" and not context.scope.is_group:
        return "这是私聊，没有群记忆；请在群里使用 /memory group …"
    if action == "list":
        return await _list(engine, context, target, rest)
    if action == "search":
        return await _search(engine, context, target, rest)
    return await _delete(engine, context, target, rest)


async def handle(bot: Bot, event: MessageEvent, matcher: Matcher, argument: Message = CommandArg()) -> None:  # noqa: B008
    """Every ``/memory`` command gets one reply, within ``tool_timeout_seconds``."""
    words = clean_text(argument.extract_plain_text()).split()
    started = time.perf_counter()
    timeout = None
    try:
        engine = await get_engine()
        if not engine.config.enable:
            reply = "记忆功能已被管理员关闭"
        else:
            timeout = engine.config.tool_timeout_seconds
            reply = await asyncio.wait_for(answer(engine, bot, event, words), timeout=timeout)
    except TimeoutError:
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
