"""Who changes a fact and which facts they reach (``Editor``), and the two steps every change of
one fact starts with: the locks (``lock_for``) and the fact as the editor may change it
(``load_visible``). Corrections, forgets and ``keep`` go through them.

An editor is a chat's speaker (their ``ChatContext``: the facts that chat may see, as recall
shows them; the permissions then say which of those they may change) or the operator working on
one chat (an ``Operator``, such as the consolidation cycle: that chat's facts and only those).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..domain.permissions import Actor
from ..domain.records import ChatContext, MemoryRecord, MemoryStatus, Scope
from ..domain.visibility import ScopePolicy, visibility_for
from ..errors import ConcurrentChange, NotFound
from ..store import repository
from ..store.models import MemoryRow
from ..store.unit_of_work import UnitOfWork


@dataclass(frozen=True, slots=True)
class Editor:
    """Who changes facts and which facts they reach: a chat's speaker (``actor`` is their
    ``ChatContext``: the facts that chat may see, as recall shows them, and the permissions say
    which of those they may change), or the operator working on one chat (``actor`` is an
    ``Operator``, such as the consolidation cycle: that chat's facts, and only those)."""

    actor: Actor
    bot_id: str
    scope: Scope

    @classmethod
    def of(cls, context: ChatContext) -> Editor:
        return cls(context, context.bot_id, context.scope)

    @property
    def context(self) -> ChatContext | None:
        return self.actor if isinstance(self.actor, ChatContext) else None

    def reaches(self, record: MemoryRecord, policy: ScopePolicy) -> bool:
        if self.context is not None:
            return visibility_for(self.context, policy).allows(record)
        return record.bot_id == self.bot_id and record.scope == self.scope


async def lock_for(uow: UnitOfWork, context: ChatContext | Editor, memory_id: int) -> None:
    """Lock this chat and, when it is another one (a private chat forgetting a group fact),
    the chat the fact belongs to: both in one call, before anything is read for the change."""
    editor = context if isinstance(context, Editor) else Editor.of(context)
    rows = await repository.get_rows(uow.session, editor.bot_id, [memory_id])
    row = rows.get(memory_id)
    scopes = [editor.scope]
    if row is not None:
        scopes.append(repository.to_record(row).scope)
    await uow.session.rollback()  # nothing read before the lock may be trusted
    await uow.lock_scope(editor.bot_id, *scopes)


async def load_visible(
    uow: UnitOfWork,
    context: ChatContext | Editor,
    memory_id: int,
    policy: ScopePolicy,
    *,
    expired_ok: bool = False,
) -> MemoryRow:
    """The active fact ``memory_id`` if this chat may see it under the configured ``policy`` (as
    recall does: what a chat was shown, it may correct or forget, if permitted), or if it is a
    fact of the operator's chat (``Editor``); else why not, in Chinese. ``expired_ok``: an expired
    fact too (a forget: it is still the user's to remove; a correction is refused: it would bring
    the text back, which is a restore's decision)."""
    editor = context if isinstance(context, Editor) else Editor.of(context)
    rows = await repository.get_rows(uow.session, editor.bot_id, [memory_id])
    row = rows.get(memory_id)
    if row is None:
        if await repository.barrier_for(uow.session, memory_id):
            raise NotFound(f"记忆 #{memory_id} 已被删除")
        raise NotFound(f"没有找到编号为 {memory_id} 的记忆")
    if not editor.reaches(repository.to_record(row), policy):
        raise NotFound(f"没有找到编号为 {memory_id} 的记忆")
    if row.status == MemoryStatus.EXPIRED.value and not expired_ok:
        raise NotFound(f"记忆 #{memory_id} 已过期；请先恢复（/memory restore {memory_id}，管理员）再更正")
    if row.status not in (MemoryStatus.ACTIVE.value, MemoryStatus.EXPIRED.value):
        newer = f"，新版本是 #{row.superseded_by}" if row.superseded_by else ""
        raise ConcurrentChange(f"记忆 #{memory_id} 已被修改{newer}；请对新版本操作")
    return row
