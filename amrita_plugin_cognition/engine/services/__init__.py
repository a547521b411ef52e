"""The engine's use cases, one small service per area and one module each, reached from the facade
as attributes: ``engine.memories``, ``engine.notes``, ``engine.profiles``, ``engine.governance``,
``engine.index``, ``engine.jobs``, ``engine.turns``, ``engine.idle_windows``, ``engine.decay``,
``engine.knowledge``, ``engine.consolidation`` and ``engine.imports``.

Each method is the one way callers (the bot, the CLI, the benchmarks) reach a use case; it
delegates to the module function that does the work (``writes.remember``, ``notes.add_pin`` …),
which stays where it is, takes the engine (or a ``ports`` protocol of what it needs) first, and is
what the tests may still call directly.
"""

from .consolidation import ConsolidationService
from .decay import DecayService
from .governance import GovernanceService
from .idle_windows import IdleWindowService
from .imports import ImportService
from .index import IndexService
from .jobs import JobService
from .knowledge import KnowledgeService
from .memories import MemoryService
from .notes import NoteService
from .profiles import ProfileService
from .turns import TurnService

__all__ = [
    "ConsolidationService",
    "DecayService",
    "GovernanceService",
    "IdleWindowService",
    "ImportService",
    "IndexService",
    "JobService",
    "KnowledgeService",
    "MemoryService",
    "NoteService",
    "ProfileService",
    "TurnService",
]
