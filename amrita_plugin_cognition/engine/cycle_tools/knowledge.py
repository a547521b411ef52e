"""The knowledge base from the cycle: ``cycle_knowledge_search`` and ``cycle_knowledge_get`` (the
bot account's shown entries, and this chat's stale ones), ``cycle_knowledge_write`` (create, or
update with the version read) and ``cycle_knowledge_delete``.

An entry is this chat's to change when every memory it was derived from is a fact of this chat
(or, with no source, when this chat's cycle wrote it: ``author``). A stale one (a source forgotten
or corrected) is re-derived by an update or deleted; its old text is not shown, as it may still
say what was forgotten: it is rewritten from the sources left. A write keeps the domain's policy
(``judge_entry``: no private chat's content, no person's details, no secret) and more: from a
private chat it is refused outright, its sources must be active facts of this chat about nobody
who opted out, its text may name no opted-out user and no piece of it may hash like a fact
forgotten here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...domain.governance import OTHER_OPTED_OUT_MESSAGE
from ...domain.inert import inert_line, inert_lines
from ...domain.knowledge import KnowledgeEntry
from ...llm.agent_types import AgentTool
from ..switches import switch_state
from .arguments import (
    KnowledgeDeleteArguments,
    KnowledgeGetArguments,
    KnowledgeSearchArguments,
    KnowledgeWriteArguments,
)
from .common import changed, chat_facts, ids_text, refusal, tool
from .desk import CycleDesk

if TYPE_CHECKING:
    from ..service import CognitionEngine

PRIVATE_REFUSAL = "私聊的内容不能进入知识库（知识库对所有有权限的会话公开）"
SUMMARY_CHARS = 80


def author(desk: CycleDesk) -> str:
    """Who an entry written by this chat's cycle names as its writer."""
    return f"consolidation:{desk.scope.key}"


async def owned(engine: CognitionEngine, desk: CycleDesk, entry: KnowledgeEntry) -> bool:
    """Whether the entry is this chat's to change (see the module doc)."""
    if not entry.source_ids:
        return entry.updated_by == author(desk)
    found = await engine.memories.in_chat(desk.bot_id, desk.scope, entry.source_ids)
    return len(found) == len(set(entry.source_ids))


async def stale_entries(engine: CognitionEngine, desk: CycleDesk) -> list[KnowledgeEntry]:
    """This chat's entries hidden since a source was forgotten or corrected (newest first)."""
    listed = await engine.knowledge.list(desk.bot_id, state="stale", limit=200)
    return [item.entry for item in listed if await owned(engine, desk, item.entry)]


def entry_line(entry: KnowledgeEntry) -> str:
    """``#4 标题 — 摘要``; a stale entry's title alone (its text may still say what was forgotten)."""
    summary = f" — {inert_line(entry.summary, SUMMARY_CHARS)}" if entry.summary and entry.shown else ""
    return f"#{entry.id} {inert_line(entry.title, 60)}{summary}"


async def write_entry(
    engine: CognitionEngine,
    desk: CycleDesk,
    entry_id: int | None,
    expected_version: int | None,
    title: str,
    summary: str,
    body: str,
    source_ids: Sequence[int],
) -> tuple[KnowledgeEntry | None, str]:
    """Create or update an entry in the cycle's name: the entry, or why not (a refusal answer)."""
    if not desk.scope.is_group:
        return None, refusal(PRIVATE_REFUSAL)
    ids = list(dict.fromkeys(source_ids))
    _, why = await chat_facts(engine, desk, ids)
    if why:
        return None, why
    texts = [title, summary, body]
    if (await switch_state(engine, desk.bot_id)).touches_opted_out((), texts):
        return None, refusal(OTHER_OPTED_OUT_MESSAGE)
    if await engine.governance.barred_in(desk.bot_id, desk.scope, [text for text in texts if text.strip()]):
        return None, refusal("条目包含此前被要求遗忘的内容，不能写入")
    if entry_id is None:
        entry = await engine.knowledge.create(desk.bot_id, title, summary, body, ids, by=author(desk), now=desk.now)
        changed(desk, "knowledge", entry=entry.id, action="create")
        return entry, ""
    current = await engine.knowledge.get(desk.bot_id, entry_id)
    if not await owned(engine, desk, current):
        return None, refusal(f"知识条目 #{entry_id} 不是本会话整理的，不能修改")
    if expected_version is None:
        return None, refusal(f"更新条目须给出 expected_version（读取到的版本，现在是第 {current.version} 版）")
    saved = await engine.knowledge.update(
        desk.bot_id,
        entry_id,
        title,
        summary,
        body,
        ids,
        by=author(desk),
        now=desk.now,
        expected_version=expected_version,
    )
    changed(desk, "knowledge", entry=entry_id, action="update", version=saved.entry.version)
    return saved.entry, ""


def knowledge_tools(engine: CognitionEngine, desk: CycleDesk) -> list[AgentTool]:
    async def search(args: KnowledgeSearchArguments) -> str:
        result = await engine.knowledge.search(desk.bot_id, args.query, args.top_k)
        if not result.hits:
            return "知识库里没有相关条目"
        return "\n".join(entry_line(hit.entry) for hit in result.hits)

    async def get(args: KnowledgeGetArguments) -> str:
        entry = await engine.knowledge.get(desk.bot_id, args.entry_id)
        mine = await owned(engine, desk, entry)
        if not entry.shown and not mine:
            return refusal(f"找不到知识条目 #{args.entry_id}")
        sources = ids_text(entry.source_ids) or "无"
        head = f"#{entry.id} {inert_line(entry.title, None)}（第 {entry.version} 版"
        if not entry.shown:  # its old text may still say what was forgotten: re-derived from the sources left
            return (
                f"{head}，已隐藏：有来源被遗忘或更正；剩余来源 {sources}）\n"
                "旧内容不再显示：请读取剩余来源后重写（cycle_knowledge_write 带 entry_id），或删除。"
            )
        head += f"，公开；来源 {sources}；" + ("本会话可修改）" if mine else "不是本会话整理的，只读）")
        return f"{head}\n摘要：{inert_line(entry.summary, None) or '无'}\n正文：\n{inert_lines(entry.body, None)}"

    async def write(args: KnowledgeWriteArguments) -> str:
        entry, why = await write_entry(
            engine, desk, args.entry_id, args.expected_version, args.title, args.summary, args.body, args.source_ids
        )
        if entry is None:
            return why
        return f"已写入知识条目 #{entry.id}（第 {entry.version} 版）"

    async def delete(args: KnowledgeDeleteArguments) -> str:
        entry = await engine.knowledge.get(desk.bot_id, args.entry_id)
        if not await owned(engine, desk, entry):
            return refusal(f"知识条目 #{args.entry_id} 不是本会话整理的，不能删除")
        await engine.knowledge.delete(desk.bot_id, args.entry_id, by=author(desk), now=desk.now)
        changed(desk, "knowledge", entry=args.entry_id, action="delete", reason=args.reason[:100])
        return f"已删除知识条目 #{args.entry_id}"

    return [
        tool(
            engine,
            desk,
            "cycle_knowledge_search",
            "搜索知识库，返回条目编号、标题和摘要。",
            KnowledgeSearchArguments,
            search,
        ),
        tool(
            engine,
            desk,
            "cycle_knowledge_get",
            "读取一个知识条目的全文、版本和来源（包括本会话待重写的隐藏条目）。",
            KnowledgeGetArguments,
            get,
        ),
        tool(
            engine,
            desk,
            "cycle_knowledge_write",
            "新建或更新知识条目：只写通用知识，不含个人信息、私聊或敏感内容。",
            KnowledgeWriteArguments,
            write,
        ),
        tool(
            engine,
            desk,
            "cycle_knowledge_delete",
            "删除本会话整理的一个知识条目（如来源已被遗忘、无法重写时）。",
            KnowledgeDeleteArguments,
            delete,
        ),
    ]
