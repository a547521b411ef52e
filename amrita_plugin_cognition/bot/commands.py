"""``/memory`` (alias ``/cogmem``): what users and group admins can see and delete themselves.

Personal memories are never printed into a group chat. When amrita-plugin-memory is also
loaded it owns ``/memory``, and this plugin answers to ``/cogmem`` only.
"""

from __future__ import annotations

import logging

from nonebot import get_plugin, on_command
from nonebot.adapters.onebot.v11 import Bot, Message, MessageEvent
from nonebot.matcher import Matcher
from nonebot.params import CommandArg
from nonebot.rule import Rule

from ..domain.records import ChatContext, MemoryRecord
from ..engine import notes
from ..errors import CognitionError
from ..runtime import get_engine
from .context import chat_context
from .jobs import schedule_outbox_drain

logger = logging.getLogger("cognition")

PAGE_SIZE = 10
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


async def _list(engine, context: ChatContext, target: str, page_text: str) -> str:  # type: ignore[no-untyped-def]
    if page_text and not page_text.isdigit():
        return "页码必须是正整数"
    page = int(page_text or "1")
    if page < 1:
        return "页码必须是正整数"
    records, total = await engine.list_memories(context, target, (page - 1) * PAGE_SIZE, PAGE_SIZE)
    if total == 0:
        return "还没有记忆" if target == "user" else "本群还没有记忆"
    pages = (total + PAGE_SIZE - 1) // PAGE_SIZE
    if not records:
        return f"只有 {pages} 页"
    header = f"{'我的' if target == 'user' else '本群'}记忆（第 {page}/{pages} 页，共 {total} 条）"
    return "\n".join([header, *(_line(record) for record in records)])


async def _search(engine, context: ChatContext, target: str, query: str) -> str:  # type: ignore[no-untyped-def]
    if not query:
        return "请提供搜索关键词，例如 /memory user search 火锅"
    if len(query) > 200:
        return "关键词过长（上限 200 字）"
    result = await engine.recall(context, [query], top_k=50)
    if target == "user":
        hits = [hit for hit in result.hits if context.user_id in (hit.record.speaker_id, hit.record.subject_id)]
    else:
        hits = [hit for hit in result.hits if hit.record.scope == context.scope]
    if not hits:
        return "没有找到相关记忆"
    return "\n".join(["找到的记忆：", *(_line(hit.record) for hit in hits[:PAGE_SIZE])])


async def _delete(engine, context: ChatContext, target: str, id_text: str) -> str:  # type: ignore[no-untyped-def]
    if not id_text.isdigit():
        return "请提供要删除的记忆编号（数字），例如 /memory user delete 12"
    memory_id = int(id_text)
    if target == "group":
        if not context.scope.is_group:
            return "群记忆只能在群内删除"
        if not context.can_moderate_group:
            return "只有群管理员、群主或机器人管理员可以删除群记忆"
    await engine.forget_memory(context, memory_id)
    schedule_outbox_drain(engine)
    return f"已删除记忆 #{memory_id}，之后不会再被记起"


async def handle(bot: Bot, event: MessageEvent, matcher: Matcher, argument: Message = CommandArg()) -> None:  # noqa: B008
    words = argument.extract_plain_text().split()
    try:
        engine = await get_engine()
        if not engine.config.enable:
            await matcher.finish("记忆功能已被管理员关闭")
        context = await chat_context(bot, event)
        if not words:
            await matcher.finish(USAGE)
        target, action, rest = words[0], (words[1] if len(words) > 1 else ""), " ".join(words[2:])
        if target == "memo":
            memo = await notes.read_memo(engine, context)
            await matcher.finish(f"本会话备忘录：\n{memo}" if memo else "本会话还没有备忘录")
        if target not in ("user", "group") or action not in ("list", "search", "delete"):
            await matcher.finish(USAGE)
        if target == "user" and context.scope.is_group and action in ("list", "search"):
            await matcher.finish("为保护隐私，个人记忆不会在群里展示，请私聊我使用这个命令")
        if target == "group" and not context.scope.is_group:
            await matcher.finish("这是私聊，没有群记忆；请在群里使用 /memory group …")
        if action == "list":
            answer = await _list(engine, context, target, rest)
        elif action == "search":
            answer = await _search(engine, context, target, rest)
        else:
            answer = await _delete(engine, context, target, rest)
    except CognitionError as error:
        answer = error.zh
    await matcher.finish(answer)


memory_command.handle()(handle)
cogmem_command.handle()(handle)
