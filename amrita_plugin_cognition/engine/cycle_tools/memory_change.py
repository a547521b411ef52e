"""Changing the chat's memories: ``cycle_memory_write`` (a new fact through the write path),
``cycle_memory_update`` (importance and tags in place; a new text supersedes the fact),
``cycle_memory_merge`` (a new fact built from several, each source superseded, lineage kept) and
``cycle_memory_forget`` (the forget path with its lineage, in the cycle's name). Each change is
one unit of work of its use case, counted on the desk and logged. Only this chat's ids; a fact by,
about or naming an opted-out user is never changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...domain.cycle_rules import IMPORTANCE_LABELS
from ...domain.records import Importance, MemoryKind
from ...llm.agent_types import AgentTool
from .arguments import MemoryForgetArguments, MemoryMergeArguments, MemoryUpdateArguments, MemoryWriteArguments
from .common import CYCLE_ACTOR, admission_refusal, changed, chat_facts, ids_text, refusal, tool
from .desk import CycleDesk

if TYPE_CHECKING:
    from ..service import CognitionEngine


def memory_change_tools(engine: CognitionEngine, desk: CycleDesk) -> list[AgentTool]:
    async def memory_write(args: MemoryWriteArguments) -> str:
        record = await engine.memories.write_consolidated(
            CYCLE_ACTOR,
            desk.bot_id,
            desk.scope,
            args.text,
            Importance(args.importance),
            args.tags,
            about=args.about_user_id,
            kind=MemoryKind(args.kind),
            now=desk.now,
        )
        changed(desk, "written", memory=record.id)
        return f"已记下 #{record.id}"

    async def memory_update(args: MemoryUpdateArguments) -> str:
        found, why = await chat_facts(engine, desk, [args.id])
        if why:
            return why
        record = found[args.id]
        importance = Importance(args.importance) if args.importance else None
        if args.text is not None and args.text.strip() != record.text:
            why = await admission_refusal(args.text)
            if why:
                return refusal(why)
            if await engine.governance.barred_in(desk.bot_id, desk.scope, [args.text]):
                return refusal("新文字包含此前被要求遗忘的内容，不能写入")
            new = await engine.memories.revise_in_chat(
                CYCLE_ACTOR, desk.bot_id, desk.scope, args.id, args.text, importance, args.tags, now=desk.now
            )
            changed(desk, "updated", memory=args.id, new=new.id)
            return f"已改写：#{args.id} → #{new.id}（旧的已被取代）"
        if importance is None and args.tags is None:
            return refusal("没有要修改的内容")
        updated = await engine.memories.relabel(CYCLE_ACTOR, desk.bot_id, desk.scope, args.id, importance, args.tags)
        changed(desk, "updated", memory=args.id)
        label = IMPORTANCE_LABELS[importance or updated.importance]
        tags = "、".join(args.tags if args.tags is not None else updated.tags) or "无"
        return f"已更新 #{args.id}：重要性 {label}，标签 {tags}"

    async def memory_merge(args: MemoryMergeArguments) -> str:
        ids = list(dict.fromkeys(args.ids))
        _, why = await chat_facts(engine, desk, ids)
        if why:
            return why
        why = await admission_refusal(args.text)
        if why:
            return refusal(why)
        done = await engine.consolidation.merge(
            desk.bot_id, desk.scope, ids, args.text, Importance(args.importance), args.tags, now=desk.now
        )
        changed(desk, "merged", merged=done.merged_id, sources=list(done.source_ids))
        return f"已合并 {ids_text(done.source_ids)} → #{done.merged_id}（来源均已被取代，可追溯）"

    async def memory_forget(args: MemoryForgetArguments) -> str:
        _, why = await chat_facts(engine, desk, [args.id], active=False)  # a merge's source names the merge
        if why:
            return why
        forgotten = await engine.governance.forget_in_chat(CYCLE_ACTOR, desk.bot_id, desk.scope, args.id, now=desk.now)
        changed(desk, "forgotten", memory=forgotten.id, asked=args.id, reason=args.reason[:100])
        also = f"（#{args.id} 属于合并记忆 #{forgotten.id}，已一并遗忘整条来源链）" if forgotten.id != args.id else ""
        return f"已遗忘 #{forgotten.id}{also}"

    return [
        tool(
            engine,
            desk,
            "cycle_memory_write",
            "写入一条新记忆（来源记为整理）。",
            MemoryWriteArguments,
            memory_write,
        ),
        tool(
            engine,
            desk,
            "cycle_memory_update",
            "修改一条记忆（只给要改的字段）。",
            MemoryUpdateArguments,
            memory_update,
        ),
        tool(
            engine,
            desk,
            "cycle_memory_merge",
            "把说同一件事的几条记忆合并成一条新记忆，来源被取代并记入来源链。",
            MemoryMergeArguments,
            memory_merge,
        ),
        tool(
            engine,
            desk,
            "cycle_memory_forget",
            "遗忘一条错误或无价值的记忆（连同旧版本和合并来源，不可恢复，慎用）。",
            MemoryForgetArguments,
            memory_forget,
        ),
    ]
