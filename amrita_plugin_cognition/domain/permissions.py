"""Who may change what: one pure policy for memories, the pinned memo and pins.

Every entry point (tools, ``/memory``, the CLI through the Python API, later capabilities) asks
these functions; none decides on its own. Identity and role come from the event
(``ChatContext``), never from an LLM argument. A refusal raises ``PermissionDenied`` (or
``InvalidInput`` when the request itself is one the plugin never carries out) with a Chinese
message for the chat.

The rules:

* **Memories.** In a private chat, a user changes the facts of that chat and forgets group facts
  said by or about them. In a group, a fact of the group is changed or forgotten by the person who
  said it or whom it is about, by a group admin or owner, or by a bot admin. A correction writes
  new text where it is typed: text typed in one chat never becomes a fact of another chat, so a
  correction is only made in the chat the fact belongs to (a group fact is corrected in its
  group; from a private chat it can be forgotten, not rewritten).
* **Pinned memo.** Everyone in the chat reads it and appends to it; replacing it as a whole (which
  can erase what others wrote) needs a group admin, the owner or a bot admin in a group.
* **Pins.** Everyone adds pins; a pin is edited or deleted by its author, a group admin, the owner
  or a bot admin.
* **Delete-all** (``/memory … clear``). Every user, for everything of theirs; a chat's own
  everything: in a group its admins, owner or a bot admin, in a private chat its user; the whole
  bot account: a bot admin, from a private chat. Each asks for 确认 first.
* **Chat switch** (``/memory off|on``). In a group, a group admin, the owner or a bot admin; in a
  private chat, the user (the only person in it). Opting out (``/memory optout|optin``) is each
  user's own choice, for themselves only, from any chat.
* **Keep and expiry.** Marking a memory kept (the decay sweep never retires it) is for whoever
  may forget it. An expired memory is listed and restored in its own chat by whoever may switch
  that chat (its admins, owner or a bot admin in a group; the user in a private chat).
* **The operator.** Whoever runs ``ambot cognition`` holds the bot's database: the bot's owner.
  They are an ``Operator`` (named in the audit), an actor the policy lets do every governance
  action on every bot account, never an unchecked path: the engine's use cases ask
  ``check_erase`` / ``check_set_chat_memory`` / ``check_opt_out`` of every actor, whatever the
  entry point (``/memory``, a tool, the CLI, the Python API).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidInput, PermissionDenied
from .erasure import ErasureTarget
from .records import ChatContext, MemoryRecord, Scope


@dataclass(frozen=True, slots=True)
class Operator:
    """The bot's owner at the command line (or a script on the same database), or the
    consolidation cycle acting for them (``name`` ``consolidation``). ``name`` is what the audit
    and the barriers record (``--actor``, default ``cli``)."""

    name: str = "cli"


#: Who asks for a governance action: someone in a chat (identity and role from the event) or the
#: operator. Nothing else is an actor: a bare string is refused, so no caller can skip the check.
Actor = ChatContext | Operator


def actor_name(actor: Actor) -> str:
    """Who the audit and the barriers name: a chat's user by their QQ number, an operator by name."""
    return actor.user_id if isinstance(actor, ChatContext) else actor.name


def _chat_actor(actor: object, bot_id: str) -> ChatContext | None:
    """None for the operator; the chat for a chat actor of this bot account; else refused."""
    if isinstance(actor, Operator):
        return None
    if not isinstance(actor, ChatContext):
        raise PermissionDenied("无法确认操作者的身份，已拒绝")
    if actor.bot_id != bot_id:
        raise PermissionDenied("不能操作另一个机器人账号的记忆")
    return actor


def _about(context: ChatContext, record: MemoryRecord) -> bool:
    return context.user_id in (record.speaker_id, record.subject_id)


def may_forget_memory(context: ChatContext, record: MemoryRecord) -> bool:
    if record.bot_id != context.bot_id:
        return False
    if record.scope == context.scope:
        return not context.scope.is_group or context.can_moderate_group or _about(context, record)
    # from a private chat: the user's own group facts
    return not context.scope.is_group and record.scope.is_group and _about(context, record)


def check_forget_memory(context: ChatContext, record: MemoryRecord) -> None:
    if not may_forget_memory(context, record):
        raise PermissionDenied("只有群管理员、群主、机器人管理员或这条记忆的本人可以删除它")


def check_correct_memory(context: ChatContext, record: MemoryRecord) -> None:
    """A correction is a forget of the old text plus new text written here: both must be allowed."""
    if record.scope != context.scope:
        if record.scope.is_group and not context.scope.is_group:
            raise InvalidInput(
                f"记忆 #{record.id} 属于群聊，私聊里写的内容不会写进群记忆；请在该群里更正，或在这里删除它"
            )
        raise InvalidInput(f"记忆 #{record.id} 不属于当前会话，只能在它所属的会话里更正")
    if not may_forget_memory(context, record):
        raise PermissionDenied("只有群管理员、群主、机器人管理员或这条记忆的本人可以修改它")


def check_forget(actor: Actor, record: MemoryRecord) -> None:
    """A forget by ``actor``: a chat's speaker as ``check_forget_memory`` says; the operator (the
    CLI, the consolidation cycle) any fact of the bot account (the engine keeps the cycle to its
    own chat's facts)."""
    context = _chat_actor(actor, record.bot_id)
    if context is not None:
        check_forget_memory(context, record)


def check_correct(actor: Actor, record: MemoryRecord) -> None:
    """A correction by ``actor``: a chat's speaker as ``check_correct_memory`` says; the operator
    any fact of the bot account (written in the fact's own chat, as every correction is)."""
    context = _chat_actor(actor, record.bot_id)
    if context is not None:
        check_correct_memory(context, record)


def may_replace_memo(context: ChatContext) -> bool:
    return not context.scope.is_group or context.can_moderate_group


def check_replace_memo(context: ChatContext) -> None:
    if not may_replace_memo(context):
        raise PermissionDenied("群备忘录只能由群管理员、群主或机器人管理员整体替换；普通成员可以追加内容")


def may_change_pin(context: ChatContext, author_id: str) -> bool:
    return not context.scope.is_group or context.can_moderate_group or author_id == context.user_id


def check_change_pin(context: ChatContext, pin_id: int, author_id: str) -> None:
    if not may_change_pin(context, author_id):
        raise PermissionDenied(f"提醒 #{pin_id} 由别人添加，只有添加者、群管理员、群主或机器人管理员可以修改或删除")


def may_switch_chat(context: ChatContext) -> bool:
    return not context.scope.is_group or context.can_moderate_group


def check_switch_chat(context: ChatContext) -> None:
    if not may_switch_chat(context):
        raise PermissionDenied("只有群管理员、群主或机器人管理员可以开关本群的记忆；不想被记住可以用 /memory optout")


def check_erase_chat(context: ChatContext) -> None:
    """Deleting everything of this chat: in a group its admins, owner or a bot admin; in a
    private chat its user."""
    if context.scope.is_group and not context.can_moderate_group:
        raise PermissionDenied("只有群管理员、群主或机器人管理员可以删除本群的全部记忆")


def check_erase_bot(context: ChatContext) -> None:
    """Deleting everything this bot account keeps: a bot admin, in a private chat."""
    if not context.is_bot_admin:
        raise PermissionDenied("只有机器人管理员可以删除机器人的全部记忆")
    if context.scope.is_group:
        raise InvalidInput("删除机器人的全部记忆请私聊我操作")


def check_erase(actor: Actor, target: ErasureTarget) -> None:
    """Delete-all of ``target`` by ``actor``: the operator any; in chat, a user themselves, a
    chat's own everything from that chat (``check_erase_chat``), the bot account by a bot admin
    in a private chat (``check_erase_bot``)."""
    context = _chat_actor(actor, target.bot_id)
    if context is None:
        return
    if target.kind == "user":
        if target.user_id != context.user_id or not context.user_id:
            raise PermissionDenied("只能删除你自己的全部记忆")
    elif target.kind == "chat":
        if target.scope != context.scope:
            raise PermissionDenied("只能在本会话里删除本会话的全部记忆")
        check_erase_chat(context)
    else:
        check_erase_bot(context)


def check_set_chat_memory(actor: Actor, bot_id: str, scope: Scope) -> None:
    """A chat's switch: the operator any chat's; in chat, that chat's by who may (``check_switch_chat``)."""
    context = _chat_actor(actor, bot_id)
    if context is None:
        return
    if context.scope != scope:
        raise PermissionDenied("只能开关当前会话的记忆")
    check_switch_chat(context)


def check_opt_out(actor: Actor, bot_id: str, user_id: str) -> None:
    """Opting out (or back in): the user's own choice; the operator may record it for them."""
    context = _chat_actor(actor, bot_id)
    if context is not None and (not context.user_id or context.user_id != user_id):
        raise PermissionDenied("只能为你自己关闭或恢复记忆")


def check_keep_memory(context: ChatContext, record: MemoryRecord) -> None:
    if not may_forget_memory(context, record):
        raise PermissionDenied("只有群管理员、群主、机器人管理员或这条记忆的本人可以设置保留它")


def check_manage_expired(actor: Actor, bot_id: str, scope: Scope) -> None:
    """Listing and restoring a chat's expired memories: the operator any chat's; in chat, that
    chat's by who may switch it (``may_switch_chat``)."""
    context = _chat_actor(actor, bot_id)
    if context is None:
        return
    if context.scope != scope:
        raise PermissionDenied("只能在记忆所属的会话里查看或恢复过期的记忆")
    if not may_switch_chat(context):
        raise PermissionDenied("只有群管理员、群主或机器人管理员可以查看和恢复本群过期的记忆")


def check_run_cycle(actor: Actor, bot_id: str, scope: Scope) -> None:
    """A consolidation cycle run now (``/memory dmn``): the operator any chat's; in chat, a bot
    admin (superusers included), for the chat they are in."""
    context = _chat_actor(actor, bot_id)
    if context is None:
        return
    if context.scope != scope:
        raise PermissionDenied("只能整理当前会话的记忆")
    if not context.is_bot_admin:
        raise PermissionDenied("只有机器人管理员可以立即整理记忆")
