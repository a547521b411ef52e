"""The kinds of work in the historian's queue (``cognition_job.kind``)."""

from __future__ import annotations

#: Facts to extract from the observations of an ``end`` call (``engine/turns.py``).
OBSERVATIONS_JOB = "observations"
#: Facts to extract from transcript turns that ended without ``end`` (``engine/turns.py``).
TRANSCRIPT_JOB = "transcript"
#: A card's merge or rebuild (``engine/profile_queue.py``).
MERGE_JOB = "profile_merge"
#: A chat's consolidation cycle (``engine/cycles.py``): one waiting per chat, due at its idle window.
CONSOLIDATION_JOB = "consolidation"
#: How the bot appears as a speaker in a job's messages (recent turns, transcript batches).
BOT_SPEAKER = "机器人"
#: The jobs that read a chat's messages: what switching the chat off calls off.
EXTRACTION_JOBS = frozenset({OBSERVATIONS_JOB, TRANSCRIPT_JOB})
#: The lease order's tiers, first to last (a kind not named here comes after them all). First
#: the facts a user asked the bot to remember (an ``end`` call's observations: the user may ask
#: about them in the next turn), then the transcript's batches (already late by design: they
#: wait for the chat's pause), both before card merges and consolidation cycles, which only
#: refine what is there.
LEASE_TIERS: tuple[frozenset[str], ...] = (frozenset({OBSERVATIONS_JOB}), frozenset({TRANSCRIPT_JOB}))
#: A job of a later tier that has been due this long is leased with the first tier, oldest due
#: first: a busy bot makes its transcript facts and cards late, never stops them.
BACKGROUND_PATIENCE_SECONDS = 120.0
