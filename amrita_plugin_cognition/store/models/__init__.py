"""ORM models of the authority store (nonebot-plugin-orm; SQLite by default, PostgreSQL when grown).

Datetimes are stored in UTC (``UTCDateTime`` converts an aware value of any offset on the way in:
SQLite keeps no offset, so a local time would otherwise be stored hours off). No server-side
defaults: every value is set by the repository, so the schema behaves the same on every database
and under ``orm sync``.

The tables live in one module per area (``types`` for the column types they share); this module
re-exports every name, so ``from .models import MemoryRow`` works wherever it did."""

from __future__ import annotations

from .consolidation import ChatActivityRow, CycleRunRow
from .governance import AuditRow, ChatSwitchRow, OptOutRow
from .imports import ImportRecordRow
from .knowledge import KnowledgeRevisionRow, KnowledgeRow, KnowledgeSuggestionRow
from .memories import BarrierRow, MemoryRow, MemorySourceRow
from .notes import MemoRevisionRow, MemoRow, NoteRow, PinRow, TranscriptRow
from .operations import LLMUsageRow, MetaRow
from .profiles import ProfileRevisionRow, ProfileRow
from .queues import ChangeRow, JobRow, OutboxRow
from .types import ID, NAME_COLUMN_CHARS, UTCDateTime, fit_name
from .vectors import MemoryVectorRow

#: Every table's model, the bank's own first (what a message about missing tables names first).
MODELS = (
    MemoryRow,
    MemorySourceRow,
    MemoRow,
    MemoRevisionRow,
    PinRow,
    OutboxRow,
    BarrierRow,
    MetaRow,
    NoteRow,
    JobRow,
    TranscriptRow,
    ChangeRow,
    ChatSwitchRow,
    OptOutRow,
    AuditRow,
    ProfileRow,
    ProfileRevisionRow,
    LLMUsageRow,
    ChatActivityRow,
    KnowledgeRow,
    KnowledgeRevisionRow,
    KnowledgeSuggestionRow,
    CycleRunRow,
    ImportRecordRow,
    MemoryVectorRow,
)

__all__ = [
    "ID",
    "MODELS",
    "NAME_COLUMN_CHARS",
    "AuditRow",
    "BarrierRow",
    "ChangeRow",
    "ChatActivityRow",
    "ChatSwitchRow",
    "CycleRunRow",
    "ImportRecordRow",
    "JobRow",
    "KnowledgeRevisionRow",
    "KnowledgeRow",
    "KnowledgeSuggestionRow",
    "LLMUsageRow",
    "MemoRevisionRow",
    "MemoRow",
    "MemoryRow",
    "MemorySourceRow",
    "MemoryVectorRow",
    "MetaRow",
    "NoteRow",
    "OptOutRow",
    "OutboxRow",
    "PinRow",
    "ProfileRevisionRow",
    "ProfileRow",
    "TranscriptRow",
    "UTCDateTime",
    "fit_name",
]
