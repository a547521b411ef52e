"""The plugin's public surface: what the chat adapter (``bot``), the command line (``cli``),
the benchmarks and other callers import, and nothing else of the engine's insides.

Everything is re-exported from the module that defines it (as httpx re-exports its private
modules): the facade and its services, what they return, the domain types and pure helpers a
caller needs, and the errors. ``bot`` and ``cli`` import from here and from the top-level
``config``, ``errors``, ``logs`` and ``runtime`` modules only (an import-linter contract).

The names load when first used: ``--help`` and the pure evaluations of the command line import
this module without loading the engine, the store or the vector index (``tests/test_cli_startup``),
and a name costs only the import of its own module.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import CognitionConfig as CognitionConfig
    from .config import ProfileSettings as ProfileSettings
    from .domain.admission import AdmissionVerdict as AdmissionVerdict
    from .domain.admission import SecondOpinion as SecondOpinion
    from .domain.admission import admit as admit
    from .domain.chat_activity import ChatActivity as ChatActivity
    from .domain.chat_activity import HeatPolicy as HeatPolicy
    from .domain.chat_activity import SlotRates as SlotRates
    from .domain.chat_activity import add_counts as add_activity_counts
    from .domain.chat_activity import cell_of as activity_cell_of
    from .domain.chat_activity import cycle_done as activity_cycle_done
    from .domain.chat_activity import slot_rates as slot_rates
    from .domain.clock import UTC as UTC
    from .domain.clock import as_utc as as_utc
    from .domain.clusters import DuplicateCluster as DuplicateCluster
    from .domain.clusters import DuplicateLink as DuplicateLink
    from .domain.consent import JUDGED_MAX_CHARS as JUDGED_MAX_CHARS
    from .domain.consent import Answer as ConsentAnswer
    from .domain.consent import Verdict as ConsentVerdict
    from .domain.consent import judge as judge_consent
    from .domain.decay import purge_date as expired_purge_date
    from .domain.duplicates import DuplicateVerdict as DuplicateVerdict
    from .domain.duplicates import judge_pair as judge_duplicate
    from .domain.erasure import ErasureTarget as ErasureTarget
    from .domain.gate import KIND_LABELS as GATE_KIND_LABELS
    from .domain.gate import check_fact as check_fact
    from .domain.governance import ACTOR_MAX_CHARS as ACTOR_MAX_CHARS
    from .domain.happened import Precision as Precision
    from .domain.happened import label as happened_label
    from .domain.happened import precision_of as precision_of
    from .domain.idle_planner import IdleWindow as IdleWindow
    from .domain.idle_planner import PlannerPolicy as PlannerPolicy
    from .domain.idle_planner import plan_window as plan_window
    from .domain.imports import KIND_NAMES as IMPORT_KIND_NAMES
    from .domain.imports import REASON_NAMES as IMPORT_REASON_NAMES
    from .domain.imports import CardText as ImportCard
    from .domain.imports import ImportItem as ImportItem
    from .domain.imports import ImportReport as ImportReport
    from .domain.imports import KnowledgeText as ImportKnowledge
    from .domain.imports import MemoText as ImportMemo
    from .domain.imports import TurnText as ImportTurn
    from .domain.imports import fingerprint as import_fingerprint
    from .domain.inert import NAME_MAX_CHARS as NAME_MAX_CHARS
    from .domain.inert import STORED_DATA_NOTICE as STORED_DATA_NOTICE
    from .domain.inert import inert_line as inert_line
    from .domain.job_kinds import MERGE_JOB as MERGE_JOB
    from .domain.judgement import ENDED_ZH as JUDGEMENT_ENDED_ZH
    from .domain.judgement import WORK_ZH as JUDGEMENT_WORK_ZH
    from .domain.judgement import changes_zh as judgement_changes_zh
    from .domain.knowledge import KnowledgeEntry as KnowledgeEntry
    from .domain.pair_model import PairModel as DuplicatePairModel
    from .domain.pair_model import for_vectors_of as pair_model_for
    from .domain.permissions import Actor as Actor
    from .domain.permissions import Operator as Operator
    from .domain.permissions import check_erase as check_erase
    from .domain.profile_access import shown_part as shown_part
    from .domain.profile_document import render_document as render_document
    from .domain.profile_policy import group_part as group_part
    from .domain.profiles import ENTITY_NAMES as ENTITY_NAMES
    from .domain.profiles import SECTION_NAMES as SECTION_NAMES
    from .domain.profiles import Card as Card
    from .domain.profiles import card_label as card_label
    from .domain.profiles import part_group as part_group
    from .domain.profiles import part_name as part_name
    from .domain.records import ChatContext as ChatContext
    from .domain.records import Importance as Importance
    from .domain.records import ImportanceLevel as ImportanceLevel
    from .domain.records import MemoryDraft as MemoryDraft
    from .domain.records import MemoryRecord as MemoryRecord
    from .domain.records import MemoryStatus as MemoryStatus
    from .domain.records import Provenance as Provenance
    from .domain.records import Scope as Scope
    from .domain.records import clean_text as clean_text
    from .domain.records import is_qq_number as is_qq_number
    from .domain.records import normalise_text as normalise_text
    from .domain.records import parse_chat_key as parse_chat_key
    from .domain.sources import describe as describe_source
    from .domain.timeresolve import anchor_hints as anchor_hints
    from .domain.timeresolve import first_date as first_date
    from .domain.tokenize import estimate_tokens as estimate_tokens
    from .domain.visibility import visibility_for as visibility_for
    from .engine.backup import BackupInfo as BackupInfo
    from .engine.browse import ChatSummary as ChatSummary
    from .engine.consolidation import MergeDone as MergeDone
    from .engine.consolidation import PrepassReport as PrepassReport
    from .engine.context import BuiltContext as BuiltContext
    from .engine.decay import SweepReport as SweepReport
    from .engine.duplicates import DuplicateClusters as DuplicateClusters
    from .engine.erasure import ErasureReport as ErasureReport
    from .engine.factory import build_engine as build_engine
    from .engine.historian_call import opinion_asker as opinion_asker
    from .engine.idle_windows import planner_policy as planner_policy
    from .engine.imports import ImportFailed as ImportFailed
    from .engine.index_repair import RepairReport as RepairReport
    from .engine.inspection import Inspected as Inspected
    from .engine.inspection import InspectFilter as InspectFilter
    from .engine.inspection import json_lines as json_lines
    from .engine.inspection import memory_document as memory_document
    from .engine.judgement import ModelStep as ModelStep
    from .engine.knowledge import ListedEntry as ListedEntry
    from .engine.knowledge import SavedEntry as SavedEntry
    from .engine.knowledge_search import KnowledgeHit as KnowledgeHit
    from .engine.knowledge_search import KnowledgeSearchResult as KnowledgeSearchResult
    from .engine.knowledge_suggestions import FiledSuggestion as FiledSuggestion
    from .engine.knowledge_suggestions import Suggestion as Suggestion
    from .engine.notes import PIN_MAX_CHARS as PIN_MAX_CHARS
    from .engine.notes import MemoRevision as MemoRevision
    from .engine.notes import Pin as Pin
    from .engine.profile_search import CardHit as CardHit
    from .engine.profile_search import CardSearchResult as CardSearchResult
    from .engine.profiles import CardRevision as CardRevision
    from .engine.profiles import ExportReport as ExportReport
    from .engine.profiles import ListedCard as ListedCard
    from .engine.profiles import SavedCard as SavedCard
    from .engine.queue import QueuedJob as QueuedJob
    from .engine.ranking import RecallFilters as RecallFilters
    from .engine.ranking import RecallHit as RecallHit
    from .engine.ranking import RecallResult as RecallResult
    from .engine.reindex import ReindexReport as ReindexReport
    from .engine.search import DEFAULT_FLOOR as DEFAULT_FLOOR
    from .engine.search import RelevanceFloor as RelevanceFloor
    from .engine.search import SearchResult as SearchResult
    from .engine.service import CognitionEngine as CognitionEngine
    from .engine.services import ConsolidationService as ConsolidationService
    from .engine.services import DecayService as DecayService
    from .engine.services import GovernanceService as GovernanceService
    from .engine.services import IdleWindowService as IdleWindowService
    from .engine.services import ImportService as ImportService
    from .engine.services import IndexService as IndexService
    from .engine.services import JobService as JobService
    from .engine.services import KnowledgeService as KnowledgeService
    from .engine.services import MemoryService as MemoryService
    from .engine.services import NoteService as NoteService
    from .engine.services import ProfileService as ProfileService
    from .engine.services import TurnService as TurnService
    from .engine.switches import SwitchChange as SwitchChange
    from .engine.turns import EndResult as EndResult
    from .engine.turns import InputMessage as InputMessage
    from .engine.why import WhyChain as WhyChain
    from .engine.why import WhyStep as WhyStep
    from .engine.writes import WriteResult as WriteResult
    from .errors import TIMEOUTS as TIMEOUTS
    from .errors import BackupInvalid as BackupInvalid
    from .errors import CognitionError as CognitionError
    from .errors import ConcurrentChange as ConcurrentChange
    from .errors import ConfigurationError as ConfigurationError
    from .errors import EmbedderUnavailable as EmbedderUnavailable
    from .errors import EngineUnavailable as EngineUnavailable
    from .errors import IndexLocked as IndexLocked
    from .errors import IndexUnavailable as IndexUnavailable
    from .errors import InvalidInput as InvalidInput
    from .errors import LimitExceeded as LimitExceeded
    from .errors import LLMNotConfigured as LLMNotConfigured
    from .errors import LLMUnavailable as LLMUnavailable
    from .errors import NotFound as NotFound
    from .errors import PermissionDenied as PermissionDenied
    from .errors import SchemaMissing as SchemaMissing
    from .errors import StoreUnavailable as StoreUnavailable
    from .index.embedders import build_embedder as build_embedder
    from .llm.agent_types import STOP_TOOL as AGENT_STOP_TOOL
    from .llm.agent_types import AgentBudget as AgentBudget
    from .llm.agent_types import AgentTool as AgentTool
    from .llm.core_version import installed_version as amrita_core_version
    from .llm.core_version import range_text as amrita_core_range
    from .llm.core_version import supported as amrita_core_supported
    from .store.audit import AuditEntry as AuditEntry
    from .store.cycles import CycleSummary as CycleSummary
    from .store.profiles import ProfileFilter as ProfileFilter

#: Each public name: (the module that defines it, its name there).
_EXPORTS: dict[str, tuple[str, str]] = {
    # The facade and its services
    "CognitionEngine": (".engine.service", "CognitionEngine"),
    "build_engine": (".engine.factory", "build_engine"),
    "MemoryService": (".engine.services", "MemoryService"),
    "NoteService": (".engine.services", "NoteService"),
    "ProfileService": (".engine.services", "ProfileService"),
    "GovernanceService": (".engine.services", "GovernanceService"),
    "IndexService": (".engine.services", "IndexService"),
    "JobService": (".engine.services", "JobService"),
    "TurnService": (".engine.services", "TurnService"),
    "IdleWindowService": (".engine.services", "IdleWindowService"),
    "ImportService": (".engine.services", "ImportService"),
    # Importers (``importers/``): what they hand the engine and what they get back
    "ImportItem": (".domain.imports", "ImportItem"),
    "ImportReport": (".domain.imports", "ImportReport"),
    "ImportMemo": (".domain.imports", "MemoText"),
    "ImportCard": (".domain.imports", "CardText"),
    "ImportKnowledge": (".domain.imports", "KnowledgeText"),
    "ImportTurn": (".domain.imports", "TurnText"),
    "import_fingerprint": (".domain.imports", "fingerprint"),
    "IMPORT_KIND_NAMES": (".domain.imports", "KIND_NAMES"),
    "IMPORT_REASON_NAMES": (".domain.imports", "REASON_NAMES"),
    "ImportFailed": (".engine.imports", "ImportFailed"),
    "DecayService": (".engine.services", "DecayService"),
    "CognitionConfig": (".config", "CognitionConfig"),
    "ProfileSettings": (".config", "ProfileSettings"),
    # What the services return
    "WriteResult": (".engine.writes", "WriteResult"),
    "RecallFilters": (".engine.ranking", "RecallFilters"),
    "RecallHit": (".engine.ranking", "RecallHit"),
    "RecallResult": (".engine.ranking", "RecallResult"),
    "SearchResult": (".engine.search", "SearchResult"),
    "RelevanceFloor": (".engine.search", "RelevanceFloor"),
    "DEFAULT_FLOOR": (".engine.search", "DEFAULT_FLOOR"),
    "CardHit": (".engine.profile_search", "CardHit"),
    "CardSearchResult": (".engine.profile_search", "CardSearchResult"),
    "BuiltContext": (".engine.context", "BuiltContext"),
    "SweepReport": (".engine.decay", "SweepReport"),
    "MergeDone": (".engine.consolidation", "MergeDone"),
    "PrepassReport": (".engine.consolidation", "PrepassReport"),
    "ModelStep": (".engine.judgement", "ModelStep"),
    "JUDGEMENT_WORK_ZH": (".domain.judgement", "WORK_ZH"),
    "JUDGEMENT_ENDED_ZH": (".domain.judgement", "ENDED_ZH"),
    "judgement_changes_zh": (".domain.judgement", "changes_zh"),
    "ConsolidationService": (".engine.services", "ConsolidationService"),
    "CycleSummary": (".store.cycles", "CycleSummary"),
    "EndResult": (".engine.turns", "EndResult"),
    "InputMessage": (".engine.turns", "InputMessage"),
    "Pin": (".engine.notes", "Pin"),
    "MemoRevision": (".engine.notes", "MemoRevision"),
    "PIN_MAX_CHARS": (".engine.notes", "PIN_MAX_CHARS"),
    "SavedCard": (".engine.profiles", "SavedCard"),
    "CardRevision": (".engine.profiles", "CardRevision"),
    "ListedCard": (".engine.profiles", "ListedCard"),
    "ExportReport": (".engine.profiles", "ExportReport"),
    "ProfileFilter": (".store.profiles", "ProfileFilter"),
    "BackupInfo": (".engine.backup", "BackupInfo"),
    "ChatSummary": (".engine.browse", "ChatSummary"),
    "WhyChain": (".engine.why", "WhyChain"),
    "WhyStep": (".engine.why", "WhyStep"),
    "ErasureReport": (".engine.erasure", "ErasureReport"),
    "InspectFilter": (".engine.inspection", "InspectFilter"),
    "Inspected": (".engine.inspection", "Inspected"),
    "memory_document": (".engine.inspection", "memory_document"),
    "json_lines": (".engine.inspection", "json_lines"),
    "AuditEntry": (".store.audit", "AuditEntry"),
    "SwitchChange": (".engine.switches", "SwitchChange"),
    "QueuedJob": (".engine.queue", "QueuedJob"),
    "ReindexReport": (".engine.reindex", "ReindexReport"),
    "RepairReport": (".engine.index_repair", "RepairReport"),
    "IdleWindow": (".domain.idle_planner", "IdleWindow"),
    "planner_policy": (".engine.idle_windows", "planner_policy"),
    "KnowledgeService": (".engine.services", "KnowledgeService"),
    "KnowledgeEntry": (".domain.knowledge", "KnowledgeEntry"),
    "KnowledgeHit": (".engine.knowledge_search", "KnowledgeHit"),
    "KnowledgeSearchResult": (".engine.knowledge_search", "KnowledgeSearchResult"),
    "ListedEntry": (".engine.knowledge", "ListedEntry"),
    "SavedEntry": (".engine.knowledge", "SavedEntry"),
    "Suggestion": (".engine.knowledge_suggestions", "Suggestion"),
    "FiledSuggestion": (".engine.knowledge_suggestions", "FiledSuggestion"),
    # Domain types and pure helpers callers need
    "ChatContext": (".domain.records", "ChatContext"),
    "Scope": (".domain.records", "Scope"),
    "Importance": (".domain.records", "Importance"),
    "ImportanceLevel": (".domain.records", "ImportanceLevel"),
    "MemoryDraft": (".domain.records", "MemoryDraft"),
    "MemoryRecord": (".domain.records", "MemoryRecord"),
    "MemoryStatus": (".domain.records", "MemoryStatus"),
    "Provenance": (".domain.records", "Provenance"),
    "clean_text": (".domain.records", "clean_text"),
    "normalise_text": (".domain.records", "normalise_text"),
    "is_qq_number": (".domain.records", "is_qq_number"),
    "parse_chat_key": (".domain.records", "parse_chat_key"),
    "UTC": (".domain.clock", "UTC"),
    "as_utc": (".domain.clock", "as_utc"),
    "ErasureTarget": (".domain.erasure", "ErasureTarget"),
    "expired_purge_date": (".domain.decay", "purge_date"),
    "Actor": (".domain.permissions", "Actor"),
    "Operator": (".domain.permissions", "Operator"),
    "check_erase": (".domain.permissions", "check_erase"),
    "visibility_for": (".domain.visibility", "visibility_for"),
    "describe_source": (".domain.sources", "describe"),
    "Precision": (".domain.happened", "Precision"),
    "happened_label": (".domain.happened", "label"),
    "precision_of": (".domain.happened", "precision_of"),
    "NAME_MAX_CHARS": (".domain.inert", "NAME_MAX_CHARS"),
    "STORED_DATA_NOTICE": (".domain.inert", "STORED_DATA_NOTICE"),
    "inert_line": (".domain.inert", "inert_line"),
    "Card": (".domain.profiles", "Card"),
    "SECTION_NAMES": (".domain.profiles", "SECTION_NAMES"),
    "ENTITY_NAMES": (".domain.profiles", "ENTITY_NAMES"),
    "part_name": (".domain.profiles", "part_name"),
    "part_group": (".domain.profiles", "part_group"),
    "card_label": (".domain.profiles", "card_label"),
    "render_document": (".domain.profile_document", "render_document"),
    "shown_part": (".domain.profile_access", "shown_part"),
    "group_part": (".domain.profile_policy", "group_part"),
    "JUDGED_MAX_CHARS": (".domain.consent", "JUDGED_MAX_CHARS"),
    "ConsentAnswer": (".domain.consent", "Answer"),
    "ConsentVerdict": (".domain.consent", "Verdict"),
    "judge_consent": (".domain.consent", "judge"),
    "ACTOR_MAX_CHARS": (".domain.governance", "ACTOR_MAX_CHARS"),
    "admit": (".domain.admission", "admit"),
    "AdmissionVerdict": (".domain.admission", "AdmissionVerdict"),
    "SecondOpinion": (".domain.admission", "SecondOpinion"),
    "opinion_asker": (".engine.historian_call", "opinion_asker"),
    "check_fact": (".domain.gate", "check_fact"),
    "judge_duplicate": (".domain.duplicates", "judge_pair"),
    "DuplicatePairModel": (".domain.pair_model", "PairModel"),
    "pair_model_for": (".domain.pair_model", "for_vectors_of"),
    "DuplicateVerdict": (".domain.duplicates", "DuplicateVerdict"),
    "DuplicateCluster": (".domain.clusters", "DuplicateCluster"),
    "DuplicateLink": (".domain.clusters", "DuplicateLink"),
    "DuplicateClusters": (".engine.duplicates", "DuplicateClusters"),
    "build_embedder": (".index.embedders", "build_embedder"),
    # The amrita_core releases the plugin supports (``bot/amrita_core_adapter.py`` checks them)
    "amrita_core_version": (".llm.core_version", "installed_version"),
    "amrita_core_supported": (".llm.core_version", "supported"),
    "amrita_core_range": (".llm.core_version", "range_text"),
    # The consolidation cycle's agent driver (``engine.llm.run_agent``): a run's tools and budget
    "AgentTool": (".llm.agent_types", "AgentTool"),
    "AgentBudget": (".llm.agent_types", "AgentBudget"),
    "AGENT_STOP_TOOL": (".llm.agent_types", "STOP_TOOL"),
    "estimate_tokens": (".domain.tokenize", "estimate_tokens"),
    "GATE_KIND_LABELS": (".domain.gate", "KIND_LABELS"),
    "first_date": (".domain.timeresolve", "first_date"),
    "anchor_hints": (".domain.timeresolve", "anchor_hints"),
    "MERGE_JOB": (".domain.job_kinds", "MERGE_JOB"),
    "ChatActivity": (".domain.chat_activity", "ChatActivity"),
    "HeatPolicy": (".domain.chat_activity", "HeatPolicy"),
    "SlotRates": (".domain.chat_activity", "SlotRates"),
    "add_activity_counts": (".domain.chat_activity", "add_counts"),
    "activity_cell_of": (".domain.chat_activity", "cell_of"),
    "activity_cycle_done": (".domain.chat_activity", "cycle_done"),
    "slot_rates": (".domain.chat_activity", "slot_rates"),
    "PlannerPolicy": (".domain.idle_planner", "PlannerPolicy"),
    "plan_window": (".domain.idle_planner", "plan_window"),
    # Errors (``errors``)
    "CognitionError": (".errors", "CognitionError"),
    "InvalidInput": (".errors", "InvalidInput"),
    "LimitExceeded": (".errors", "LimitExceeded"),
    "BackupInvalid": (".errors", "BackupInvalid"),
    "NotFound": (".errors", "NotFound"),
    "PermissionDenied": (".errors", "PermissionDenied"),
    "ConcurrentChange": (".errors", "ConcurrentChange"),
    "IndexUnavailable": (".errors", "IndexUnavailable"),
    "IndexLocked": (".errors", "IndexLocked"),
    "EmbedderUnavailable": (".errors", "EmbedderUnavailable"),
    "ConfigurationError": (".errors", "ConfigurationError"),
    "SchemaMissing": (".errors", "SchemaMissing"),
    "StoreUnavailable": (".errors", "StoreUnavailable"),
    "EngineUnavailable": (".errors", "EngineUnavailable"),
    "LLMUnavailable": (".errors", "LLMUnavailable"),
    "LLMNotConfigured": (".errors", "LLMNotConfigured"),
    "TIMEOUTS": (".errors", "TIMEOUTS"),
}

__all__ = [
    "ACTOR_MAX_CHARS",
    "AGENT_STOP_TOOL",
    "DEFAULT_FLOOR",
    "ENTITY_NAMES",
    "GATE_KIND_LABELS",
    "IMPORT_KIND_NAMES",
    "IMPORT_REASON_NAMES",
    "JUDGED_MAX_CHARS",
    "JUDGEMENT_ENDED_ZH",
    "JUDGEMENT_WORK_ZH",
    "MERGE_JOB",
    "NAME_MAX_CHARS",
    "PIN_MAX_CHARS",
    "SECTION_NAMES",
    "STORED_DATA_NOTICE",
    "TIMEOUTS",
    "UTC",
    "Actor",
    "AdmissionVerdict",
    "AgentBudget",
    "AgentTool",
    "AuditEntry",
    "BackupInfo",
    "BackupInvalid",
    "BuiltContext",
    "Card",
    "CardHit",
    "CardRevision",
    "CardSearchResult",
    "ChatActivity",
    "ChatContext",
    "ChatSummary",
    "CognitionConfig",
    "CognitionEngine",
    "CognitionError",
    "ConcurrentChange",
    "ConfigurationError",
    "ConsentAnswer",
    "ConsentVerdict",
    "ConsolidationService",
    "CycleSummary",
    "DecayService",
    "DuplicateCluster",
    "DuplicateClusters",
    "DuplicateLink",
    "DuplicatePairModel",
    "DuplicateVerdict",
    "EmbedderUnavailable",
    "EndResult",
    "EngineUnavailable",
    "ErasureReport",
    "ErasureTarget",
    "ExportReport",
    "FiledSuggestion",
    "GovernanceService",
    "HeatPolicy",
    "IdleWindow",
    "IdleWindowService",
    "ImportCard",
    "ImportFailed",
    "ImportItem",
    "ImportKnowledge",
    "ImportMemo",
    "ImportReport",
    "ImportService",
    "ImportTurn",
    "Importance",
    "ImportanceLevel",
    "IndexLocked",
    "IndexService",
    "IndexUnavailable",
    "InputMessage",
    "InspectFilter",
    "Inspected",
    "InvalidInput",
    "JobService",
    "KnowledgeEntry",
    "KnowledgeHit",
    "KnowledgeSearchResult",
    "KnowledgeService",
    "LLMNotConfigured",
    "LLMUnavailable",
    "LimitExceeded",
    "ListedCard",
    "ListedEntry",
    "MemoRevision",
    "MemoryDraft",
    "MemoryRecord",
    "MemoryService",
    "MemoryStatus",
    "MergeDone",
    "ModelStep",
    "NotFound",
    "NoteService",
    "Operator",
    "PermissionDenied",
    "Pin",
    "PlannerPolicy",
    "Precision",
    "PrepassReport",
    "ProfileFilter",
    "ProfileService",
    "ProfileSettings",
    "Provenance",
    "QueuedJob",
    "RecallFilters",
    "RecallHit",
    "RecallResult",
    "ReindexReport",
    "RelevanceFloor",
    "RepairReport",
    "SavedCard",
    "SavedEntry",
    "SchemaMissing",
    "Scope",
    "SearchResult",
    "SecondOpinion",
    "SlotRates",
    "StoreUnavailable",
    "Suggestion",
    "SweepReport",
    "SwitchChange",
    "TurnService",
    "WhyChain",
    "WhyStep",
    "WriteResult",
    "activity_cell_of",
    "activity_cycle_done",
    "add_activity_counts",
    "admit",
    "amrita_core_range",
    "amrita_core_supported",
    "amrita_core_version",
    "anchor_hints",
    "as_utc",
    "build_embedder",
    "build_engine",
    "card_label",
    "check_erase",
    "check_fact",
    "clean_text",
    "describe_source",
    "estimate_tokens",
    "expired_purge_date",
    "first_date",
    "group_part",
    "happened_label",
    "import_fingerprint",
    "inert_line",
    "is_qq_number",
    "json_lines",
    "judge_consent",
    "judge_duplicate",
    "judgement_changes_zh",
    "memory_document",
    "normalise_text",
    "opinion_asker",
    "pair_model_for",
    "parse_chat_key",
    "part_group",
    "part_name",
    "plan_window",
    "planner_policy",
    "precision_of",
    "render_document",
    "shown_part",
    "slot_rates",
    "visibility_for",
]


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use (then it is a plain attribute)."""
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __package__), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
