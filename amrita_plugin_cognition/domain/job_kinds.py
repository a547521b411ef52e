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
#: Leased before the other kinds: the jobs that make what a user said recallable, which the
#: chat's next turns wait for; card merges and consolidation cycles only refine what is there.
LEASED_FIRST = EXTRACTION_JOBS
#: A job of another kind that has been due this long is leased with them, oldest due first: a
#: busy bot makes its cards late, never stops them.
BACKGROUND_PATIENCE_SECONDS = 120.0
