"""The typed schema of the configuration: every key, its type, its range and its default,
documented in one place.

One pydantic model per section (``embedder``, ``chroma``, ``recall``, ``llm``, ``historian``,
``profiles``, ``consolidation``) under ``CognitionConfig``, each strict (a key takes only its own type) and closed
(an unknown key is an error). The models validate values only: where they come from (the file,
the environment, ``${NAME}`` references) and how errors name them is the loader's (``config``);
old key names are moved to their new ones by ``config_renames``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .config_renames import _move_renamed
from .domain.records import parse_chat_key
from .llm.settings import LLMSettings


class _Settings(BaseModel):
    """Base of every settings section: a key the model does not know is an error, and a value is
    taken only as its own type (strict: ``enable = "yes"`` or ``top_k = "8"`` is refused, naming
    the key, instead of being read as true or 8; a whole number is a valid float)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class EmbedderSettings(_Settings):
    provider: Literal["local", "openai", "ollama"] = "local"
    url: str = ""
    api_key: str = ""
    model: str = ""
    dimensions: int = Field(0, ge=0)
    batch_size: int = Field(64, ge=1, le=2048)
    #: One embedding request gives up after this long.
    timeout_seconds: float = Field(15.0, gt=0)
    #: CPU threads for the local model.
    threads: int = Field(1, ge=1, le=64)
    #: What to do when the stored fingerprint differs from the configured embedder.
    on_mismatch: Literal["auto", "ask", "never"] = "auto"
    query_cache_seconds: float = Field(300.0, ge=0)
    #: A second local model fused with the bundled one ("e5": multilingual-e5-small, needs the
    #: ``e5`` extra); only with ``provider = "local"``. Turning it on or off rebuilds the index.
    second_model: Literal["none", "e5"] = "none"
    #: The second model's share of the dense score (read at query time: no reindex).
    second_weight: float = Field(0.85, ge=0, lt=1)


class ChromaSettings(_Settings):
    mode: Literal["embedded", "server"] = "embedded"
    #: Embedded: folder (relative paths are under the data folder).
    path: str = "chroma"
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    ssl: bool = False
    headers: dict[str, str] = Field(default_factory=dict)
    tenant: str = "default_tenant"
    database: str = "default_database"
    #: Embedded: chats' vector indexes kept in memory at once (about 2.6 MB each with the bundled
    #: embedder, least recently used dropped first); another chat's is read back from the folder
    #: when it is asked (about 1 ms more per query). At 64 the process grows by about 430 MB at
    #: most, however many chats (bench/index_memory.py). Writes are saved before an index can be
    #: dropped (``index/collections.py``, ``SYNC_EVERY``). 0: chromadb's own count (the open-file
    #: limit / 5, which in a container is often no bound). A server has its own setting.
    cached_indexes: int = Field(64, ge=0, le=100000)
    #: Both modes: a call that takes longer is given up and vector search is off until it returns
    #: (a hung server degrades like a dead one).
    call_timeout_seconds: float = Field(120.0, ge=1, le=3600)


class RecallSettings(_Settings):
    top_k: int = Field(8, ge=1, le=50)
    candidates: int = Field(50, ge=5, le=500)
    #: A chat of at most this many facts is searched exactly in its vectors' copy in SQL instead of
    #: the vector index (``engine/exact_search.py``). Measured (bench/exact_search.py): the copy costs
    #: what the index does at about 500 facts on SQLite + embedded Chroma (a chat's index read back)
    #: and 1,000 on PostgreSQL + a Chroma server; at 100 it costs 0.7x and 0.4x. 0: always the index.
    exact_search_max_vectors: int = Field(500, ge=0, le=20000)
    #: "score": weighted sum of normalised scores (measured best); "rrf": reciprocal-rank fusion.
    fusion: Literal["score", "rrf"] = "score"
    dense_normalisation: Literal["minmax", "ratio"] = "minmax"
    vector_weight: float = Field(0.6, ge=0)
    keyword_weight: float = Field(0.4, ge=0)
    rrf_k: float = Field(60.0, gt=0)
    #: Added to the relevance of facts said by someone the query names.
    speaker_boost: float = Field(0.3, ge=0, le=5)
    recency_floor: float = Field(0.85, ge=0, le=1)
    recency_min_similarity: float = Field(0.3, ge=-1, le=1)
    mmr_lambda: float = Field(0.7, ge=0, le=1)
    #: Pseudo-relevance feedback: candidates close to the best few keep more of their score (0 = off).
    feedback_weight: float = Field(2.0, ge=0, le=10)
    feedback_docs: int = Field(3, ge=1, le=20)
    #: Queries this short (in characters) get the previous message as context.
    short_query_chars: int = Field(20, ge=0)
    #: Token budget of the injected memory block.
    token_budget: int = Field(1200, ge=100, le=32000)
    current_group_boost: float = Field(1.15, ge=1)
    current_private_boost: float = Field(1.25, ge=1)


class HistorianSettings(_Settings):
    """The historian: the ``end`` tool's jobs and transcript capture, turned into absolute facts."""

    #: Which turns reach the historian: "end" (only what the model hands to the ``end`` tool),
    #: "transcript" (turns are extracted from the transcript, ``end`` only writes notes), or
    #: "both" (``end`` when the model calls it; otherwise the turn is extracted from the transcript).
    capture: Literal["end", "transcript", "both"] = "both"
    #: amrita_core model preset of the historian's calls; empty = ``llm.preset`` (the chat's default).
    preset: str = ""
    #: Jobs in flight at once in this process.
    max_concurrency: int = Field(4, ge=1, le=64)
    #: How often the queue is polled (an enqueue wakes the workers at once as well).
    poll_interval_seconds: float = Field(5.0, ge=0.2, le=3600)
    #: How long a worker's lease on a job lasts (renewed while it runs); a lease that runs out (its
    #: worker died or hung) is recovered and the job run again, counting one attempt.
    job_lease_seconds: float = Field(600.0, ge=10, le=86400)
    #: Attempts of a job in all (the first one included), with exponential backoff between them;
    #: after the last one the job is "dead" (kept with its error, revived by ``jobs retry``).
    job_max_attempts: int = Field(4, ge=1, le=21)
    #: Dead jobs kept (newest first) and for how long, for ``ambot cognition jobs``.
    dead_jobs_keep: int = Field(1000, ge=0)
    dead_jobs_keep_days: float = Field(30.0, ge=0)
    #: Recent messages of the chat a job carries for disambiguation, each clipped to
    #: ``source_message_max_chars`` characters (the current input batch too).
    recent_messages_k: int = Field(10, ge=0, le=100)
    source_message_max_chars: int = Field(500, ge=20, le=10000)
    #: Transcript capture: a chat's turns without ``end`` are extracted in one call once this
    #: many wait, or once the chat has been quiet for ``transcript_pause_seconds``.
    transcript_batch_turns: int = Field(8, ge=1, le=100)
    transcript_pause_seconds: float = Field(120.0, ge=1, le=86400)
    #: Short-term notes and transcript turns kept per chat (older ones are trimmed while idle).
    notes_keep: int = Field(200, ge=1, le=100000)
    turns_keep: int = Field(200, ge=1, le=100000)


class ProfileSettings(_Settings):
    """Profile cards: the replaced versions kept per card, each section's length limit, the merge."""

    #: Replaced versions kept per card (``ambot cognition profile restore``).
    revisions_keep: int = Field(5, ge=0, le=100)
    evaluation_max_chars: int = Field(200, ge=20, le=5000)
    body_max_chars: int = Field(800, ge=50, le=20000)
    roast_max_chars: int = Field(80, ge=10, le=1000)
    #: The historian's merge step: after a job writes facts, each card they touch is merged by
    #: the model (off: cards change only by restore, the CLI and the Python API).
    merge: bool = True
    #: A merge waits this long after the first job that asks for it; the jobs for the same card
    #: within the window become one merge (one model call).
    merge_window_seconds: float = Field(600.0, ge=0, le=86400)
    #: amrita_core model preset of the merge calls; empty = ``historian.preset``.
    merge_preset: str = ""
    #: Past facts of the entity (the closest to the new observations) shown to each merge.
    merge_top_k: int = Field(20, ge=1, le=200)


class ConsolidationSettings(_Settings):
    """Consolidation in each chat's quiet hours: when a chat's cycle runs (the idle-window planner
    of ``domain/idle_planner.py``), the knowledge base it keeps, and the decay sweep."""

    #: Consolidation cycles (``engine/cycles.py``: the pre-pass, then the judgement step): a chat with
    #: new memories since its last cycle gets one in its idle window (a job in the queue); off: no
    #: cycle is planned or run (the decay sweep is separate: ``sweep_interval_hours``).
    cycle: bool = True
    #: The idle-window planner (a chat's heat maps) picks each cycle's window; off: exponential
    #: back-off from the last cycle (the ``rethink_*`` keys).
    use_idle_window_planner: bool = True
    #: The zone of the heat maps' slots and of ``idle_target_hour``; empty = ``timezone``. An unknown
    #: zone falls back to ``timezone`` (else UTC) with one warning.
    idle_timezone: str = ""
    #: A chat without history (less than a day of messages) gets its window at this hour.
    idle_target_hour: int = Field(3, ge=0, le=23)
    #: A cycle's window at most this long.
    idle_window_minutes: int = Field(60, ge=10, le=600)
    #: The shortest window worth planning, and the window of a chat busy at every hour.
    idle_short_window_minutes: int = Field(20, ge=5, le=90)
    #: Kept free between a window and the busy slots around it (the next expected message), and
    #: after the chat's last message.
    idle_buffer_minutes: int = Field(15, ge=0, le=60)
    #: How far ahead a quiet run is looked for.
    idle_horizon_hours: int = Field(48, ge=24, le=168)
    #: The quiet run required: base + penalty × log2(1 + messages since the last cycle), at most max
    #: (a max under the base wins).
    quiet_run_base_hours: float = Field(2.0, ge=2, le=24)
    quiet_run_penalty_hours: float = Field(0.5, ge=0, le=12)
    quiet_run_max_hours: float = Field(8.0, ge=2, le=48)
    #: A slot is cold at most this share of an even slot's messages and at most this many messages.
    cold_slot_max_share_percent: float = Field(50.0, ge=0, le=100)
    cold_slot_max_messages: float = Field(2.0, ge=0, le=10000)
    #: Half-lives of the weekday × slot map and of the slot-of-day map.
    heat_half_life_days: float = Field(28.0, ge=1, le=365)
    coarse_heat_half_life_days: float = Field(7.0, ge=1, le=365)
    #: Each tier is shrunk toward the coarser one by occurrences / (occurrences + this).
    shrinkage_prior_occurrences: float = Field(2.0, ge=0, le=100)
    #: Messages are counted in memory and written to SQL this often (and at shutdown).
    activity_flush_seconds: float = Field(60.0, ge=5, le=3600)
    #: Back-off without the planner: base × multiplier^(messages since the last cycle), at most max.
    rethink_base_delay_minutes: float = Field(30.0, ge=1, le=10080)
    rethink_penalty_multiplier: float = Field(1.5, ge=1, le=10)
    rethink_max_delay_minutes: float = Field(1440.0, ge=1, le=10080)

    # --- the judgement step (``engine/judgement.py``: the model agent after the pre-pass)
    #: Model rounds one cycle's judgement step may take at most.
    agent_max_iterations: int = Field(12, ge=1, le=50)
    #: Tokens (prompt + completion, as the provider reports them) one cycle's judgement step may use.
    cycle_token_budget: int = Field(45000, ge=1000, le=1_000_000)
    #: Tokens every cycle of one bot account may use in a day (in ``timezone``); 0 = no judgement
    #: step at all (the pre-pass still runs).
    daily_token_budget: int = Field(200000, ge=0, le=100_000_000)
    #: The agent may queue one short message to the user of a private chat, delivered by the bot
    #: in that private chat only (never in a group), and only while this is on.
    allow_send_to_user: bool = False

    # --- knowledge base
    #: Longest body of a knowledge entry (its title is at most 60, its summary 200 characters).
    knowledge_max_chars: int = Field(2000, ge=200, le=20000)
    #: Replaced versions kept per knowledge entry.
    knowledge_revisions_keep: int = Field(5, ge=0, le=100)
    #: Suggestions one user may file per bot account in 24 hours (0: the suggest tool refuses).
    knowledge_suggestions_per_day: int = Field(3, ge=0, le=100)

    # --- the decay sweep (``domain/decay.py``)
    #: The sweep runs every this many hours, counted from the last finished pass (kept in SQL, so
    #: restarts do not postpone it); 0 = only by ``ambot cognition sweep``.
    sweep_interval_hours: float = Field(24.0, ge=0, le=8760)
    #: Days a low-importance memory lives; then it expires.
    short_term_days: float = Field(7.0, gt=0, le=36500)
    #: Days a high-importance memory lives; then it becomes medium. Medium lives the geometric
    #: mean of the two (about 25 days at the defaults), then becomes low.
    long_term_days: float = Field(90.0, gt=0, le=36500)
    #: Days an expired memory can be restored (``ambot cognition expired restore``); then it is purged.
    expired_keep_days: float = Field(30.0, ge=0, le=36500)
    #: Memories read per batch (one transaction) of the sweep.
    sweep_batch_size: int = Field(1000, ge=10, le=20000)

    @model_validator(mode="after")
    def _lifetimes_ordered(self) -> ConsolidationSettings:
        if self.short_term_days > self.long_term_days:
            raise ValueError("short_term_days must not exceed long_term_days")
        return self


class CognitionConfig(_Settings):
    #: Master switch of the plugin (hook, tools, commands).
    enable: bool = True
    #: "strict": each group sees only its own memories; "open": groups see each other's too.
    scope_policy: Literal["strict", "open"] = "strict"
    #: Time zone used to show times to the model and to users.
    timezone: str = "Asia/Shanghai"
    #: Data folder; empty = the plugin folder nonebot-plugin-localstore assigns.
    data_dir: str = ""
    memo_max_chars: int = Field(1000, ge=50, le=20000)
    memory_max_chars: int = Field(500, ge=20, le=5000)
    pins_max_per_scope: int = Field(50, ge=1, le=1000)
    memories_max_per_scope: int = Field(100000, ge=10)
    #: Chats where the plugin is off, e.g. ["group:20001", "private:10001"].
    disabled_scopes: list[str] = Field(default_factory=list)
    outbox_interval_seconds: float = Field(30.0, ge=1)
    #: The per-turn memory lookup gives up after this long and the reply goes on without memory.
    hook_timeout_seconds: float = Field(5.0, ge=0.1, le=120)
    #: Within a turn's memory lookup, the vector side (embedding + Chroma) gets at most this
    #: share of ``hook_timeout_seconds``; when it misses, the turn keeps the keyword results.
    vector_budget_share: float = Field(0.6, gt=0, le=1)
    #: Every tool call and chat command of the plugin gives up after this long (answering so).
    tool_timeout_seconds: float = Field(20.0, ge=1, le=600)
    #: Attempts of one fact's vector-index work in all, with backoff between them; after the last
    #: one the row is "dead" (counted by ``status``, revived by ``ambot cognition outbox retry``).
    outbox_max_attempts: int = Field(8, ge=1, le=100)
    #: How long a drain holds the outbox rows it took: other processes pass them by meanwhile, and
    #: rows of a drain that died are due again after it (as ``historian.job_lease_seconds``).
    outbox_lease_seconds: float = Field(300.0, ge=10, le=86400)
    #: Replaced versions of each chat's pinned memo kept for ``ambot cognition memo restore``.
    memo_revisions_keep: int = Field(5, ge=0, le=100)
    #: The chat's last short-term notes (the ``end`` tool's memos) injected each turn.
    recent_notes_inject_k: int = Field(30, ge=0, le=500)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    chroma: ChromaSettings = Field(default_factory=ChromaSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    historian: HistorianSettings = Field(default_factory=HistorianSettings)
    profiles: ProfileSettings = Field(default_factory=ProfileSettings)
    consolidation: ConsolidationSettings = Field(default_factory=ConsolidationSettings)

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: Any) -> Any:
        """Old key names (``RENAMED_KEYS``) under their new names, silently: ``load_config`` has
        warned already; this covers the WebUI's class reading the file as written."""
        return _move_renamed(data) if isinstance(data, dict) else data

    @field_validator("timezone")
    @classmethod
    def _check_timezone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as error:
            raise ValueError(f"unknown time zone {value!r}") from error
        return value

    @field_validator("disabled_scopes")
    @classmethod
    def _check_scopes(cls, value: list[str]) -> list[str]:
        for key in value:
            parse_chat_key(key)  # 'group:<QQ number>' or 'private:<QQ number>', else a ValueError
        return value
