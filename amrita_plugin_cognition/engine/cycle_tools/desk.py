"""``CycleDesk``: what the tools of one judgement-step run share (built by the cycle before the
run, read and filled by the tools, read by the cycle after it)."""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from datetime import datetime

from ...domain.records import Scope
from ..consolidation import PrepassReport

#: The kinds of change ``CycleDesk.changes`` counts (one per change the tools made).
CHANGE_KINDS = ("merged", "updated", "forgotten", "written", "cards", "memo", "knowledge", "suggestions")


@dataclass
class CycleDesk:
    """One run over one chat: ``scope`` of ``bot_id`` at ``now``; ``last_cycle_at`` and
    ``last_summary`` of the chat's previous cycle (None and "" before its first); ``prepass`` what
    the model-free pre-pass of this cycle merged and proposed; ``allow_send_to_user`` whether
    ``cycle_send_to_user`` is offered (a private chat only). The tools count what they changed in
    ``changes`` (by kind: ``CHANGE_KINDS``) and leave the one message for the user in
    ``message_to_user``."""

    bot_id: str
    scope: Scope
    now: datetime
    last_cycle_at: datetime | None
    last_summary: str
    prepass: PrepassReport
    allow_send_to_user: bool
    changes: collections.Counter[str] = field(default_factory=collections.Counter)
    message_to_user: str | None = None
