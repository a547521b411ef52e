"""``engine.notes``: the pinned memo of a chat (with revisions) and its pins."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...domain.permissions import Operator
    from ...domain.records import ChatContext, Scope
    from ..notes import MemoRevision, Pin

from .base import UseCases, _Service

if TYPE_CHECKING:
    from .. import notes as _notes
else:  # imported on the first call into them (``base.UseCases``)
    _notes = UseCases("notes")


class NoteService(_Service):
    """The pinned memo of a chat (with revisions) and its pins."""

    async def read_memo(self, context: ChatContext) -> str:
        """The chat's memo ("" when none)."""
        return await _notes.read_memo(self._engine, context)

    async def update_memo(
        self, context: ChatContext, content: str, now: datetime | None = None, said: Sequence[str] = ()
    ) -> str:
        """Replace the memo (an admin's in a group); the old one is kept as a revision."""
        return await _notes.update_memo(self._engine, context, content, now, said)

    async def memo_of(self, bot_id: str, scope: Scope) -> str:
        """A chat's memo read by the operator or the cycle ("" when none)."""
        return await _notes.memo_of(self._engine, bot_id, scope)

    def memo_version(self, content: str) -> str:
        """The fingerprint of a memo's text that ``replace_memo_in_chat`` checks."""
        return _notes.memo_version(content)

    async def replace_memo_in_chat(
        self,
        actor: Operator,
        bot_id: str,
        scope: Scope,
        content: str,
        expected_version: str,
        now: datetime | None = None,
    ) -> str:
        """Replace a chat's memo if it is still the version read (the cycle); the old one kept as a revision."""
        return await _notes.replace_memo_in_chat(self._engine, actor, bot_id, scope, content, expected_version, now)

    async def append_memo(
        self, context: ChatContext, addition: str, now: datetime | None = None, said: Sequence[str] = ()
    ) -> str:
        """Add a line to the memo (everyone may); returns the memo as it is now."""
        return await _notes.append_memo(self._engine, context, addition, now, said)

    async def memo_revisions(self, bot_id: str, scope: Scope) -> builtins.list[MemoRevision]:
        """The kept versions of a chat's memo, newest first."""
        return await _notes.memo_revisions(self._engine, bot_id, scope)

    async def restore_memo(
        self, bot_id: str, scope: Scope, revision_id: int, by: str = "cli", now: datetime | None = None
    ) -> str:
        """Bring a kept version back (the current memo becomes a revision first)."""
        return await _notes.restore_memo(self._engine, bot_id, scope, revision_id, by, now)

    async def list_pins(self, context: ChatContext) -> builtins.list[Pin]:
        """The chat's pins, in order."""
        return await _notes.list_pins(self._engine, context)

    async def pins_of(self, bot_id: str, scope: Scope) -> builtins.list[Pin]:
        """A chat's pins read by the operator (the owner's page), in order."""
        return await _notes.pins_of(self._engine, bot_id, scope)

    async def add_pin(
        self, context: ChatContext, content: str, now: datetime | None = None, said: Sequence[str] = ()
    ) -> Pin:
        """Pin a note to the chat (everyone may)."""
        return await _notes.add_pin(self._engine, context, content, now, said)

    async def update_pin(
        self, context: ChatContext, pin_id: int, content: str, now: datetime | None = None, said: Sequence[str] = ()
    ) -> Pin:
        """Change a pin (its author, an admin, the owner or a bot admin)."""
        return await _notes.update_pin(self._engine, context, pin_id, content, now, said)

    async def delete_pin(self, context: ChatContext, pin_id: int) -> None:
        """Delete a pin (its author, an admin, the owner or a bot admin)."""
        await _notes.delete_pin(self._engine, context, pin_id)

    async def delete_pin_in_chat(self, actor: Operator, bot_id: str, scope: Scope, pin_id: int) -> None:
        """Delete a pin of one chat as the operator (the WebUI's page)."""
        await _notes.delete_pin_in_chat(self._engine, actor, bot_id, scope, pin_id)
