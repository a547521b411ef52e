"""The measuring plugin ``whole_bot.py`` loads into the memory bot (copied into its project as
``whole_bot_probe.py`` and listed after the plugin in ``[tool.amrita].plugins``): what can only be seen from
inside the bot process, written as JSON lines to ``probe-out.jsonl`` in the project.

- the plugin's own timings: every ``[cognition] stage=hook elapsed_ms=…`` (the precompletion
  hook) and ``stage=end elapsed_ms=…`` (the ``end`` tool's work) log record, with its wall time,
  and each hook that gave up (``stage=hook timeout_s=…``: that turn went on without memory);
- the queue's depth every ``SAMPLE_SECONDS``: jobs by kind and state (a pending job not due yet,
  such as a card merge inside its window, counted apart as waiting), and the outbox's rows (one
  ``GROUP BY`` on the bot's own database, through the engine's unit of work);
- freshness: the bench appends the facts it planted to ``probes.jsonl`` (marker, chat, speaker,
  sent time); each is looked up every ``POLL_SECONDS`` with the chat's own recall
  (``engine.memories.recall`` as the speaker in that chat: where the fact may be seen) until a
  recalled fact carries its marker; the wall time it was first found is written out.

- with ``PYTHONTRACEMALLOC`` set (``whole_bot.py --tracemalloc``): every ``TRACE_SECONDS``, the
  allocations grown since the probe started, by line (the top ``TRACE_LINES``), to
  ``probe-tracemalloc.txt``: what the bot's RSS growth is made of, where it is Python's.

Reading the log records costs the bot one regular expression per record; the sampler one small
query every two seconds; the probes one recall per planted fact and poll (a few a second): all
of it counted against the memory bot's own throughput.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nonebot import get_driver, require
from sqlalchemy import text

require("amrita_plugin_cognition")  # loaded as a plugin before anything of it is imported here

from amrita_plugin_cognition.api import ChatContext, Scope  # noqa: E402
from amrita_plugin_cognition.runtime import get_engine  # noqa: E402

OUT = Path("probe-out.jsonl")
TRACE = Path("probe-tracemalloc.txt")
TRACE_SECONDS = 120.0
TRACE_LINES = 25
PROBES = Path("probes.jsonl")
SAMPLE_SECONDS = 2.0
POLL_SECONDS = 0.5
FLUSH_SECONDS = 1.0
#: A planted fact not found by then is written out as missed.
GIVE_UP_SECONDS = 900.0
TIMED = re.compile(r"\[cognition\] stage=(hook|end) elapsed_ms=([0-9.]+)")
#: A turn that went on without memory: the hook gave up after ``hook_timeout_seconds``.
GAVE_UP = re.compile(r"\[cognition\] stage=hook timeout_s=([0-9.]+)")
#: Jobs by kind and state; a pending job not due yet (a card merge inside its window, a retry's
#: backoff) is counted as ``waiting`` apart. SQLite keeps the times as naive UTC text.
DEPTH = text(
    "SELECT kind, CASE WHEN state = 'pending' AND next_attempt_at > :now THEN 'waiting' ELSE state END, COUNT(*) "
    "FROM cognition_job GROUP BY 1, 2"
)
OUTBOX = text("SELECT COUNT(*) FROM cognition_outbox")

_timings: list[tuple[str, float, float]] = []


class _TimingHandler(logging.Handler):
    """Keeps the hook's and the ``end`` tool's elapsed times of the plugin's log records."""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        found = TIMED.match(message)
        if found is not None:
            _timings.append((found.group(1), record.created, float(found.group(2))))
        elif (gave_up := GAVE_UP.match(message)) is not None:
            _timings.append(("hook_timeout", record.created, float(gave_up.group(1)) * 1000))


def _write(out: Any, **fields: Any) -> None:
    out.write(json.dumps(fields, ensure_ascii=False) + "\n")


async def _sample(engine: Any, out: Any) -> None:
    async with engine.unit_of_work() as uow:
        now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        rows = (await uow.session.execute(DEPTH, {"now": now})).all()
        outbox = (await uow.session.execute(OUTBOX)).scalar_one()
    jobs = {f"{kind}:{state}": int(count) for kind, state, count in rows}
    _write(out, t=time.time(), jobs=jobs, outbox=int(outbox))


async def _found(engine: Any, probe: dict[str, Any]) -> bool:
    context = ChatContext(probe["bot"], Scope(probe["scope_kind"], probe["scope_id"]), probe["user"], probe["name"])
    result = await engine.memories.recall(context, [probe["query"]])
    return any(probe["marker"] in hit.record.text for hit in result.hits)


async def _poll(engine: Any, out: Any, pending: dict[str, dict[str, Any]]) -> None:
    now = time.time()
    for marker, probe in list(pending.items()):
        if await _found(engine, probe):
            _write(out, t=time.time(), found=marker)
            del pending[marker]
        elif now - probe["sent"] > GIVE_UP_SECONDS:
            _write(out, t=now, missed=marker)
            del pending[marker]


async def _run() -> None:
    engine = await get_engine()
    pending: dict[str, dict[str, Any]] = {}
    read = 0
    next_sample = next_flush = 0.0
    with OUT.open("a", encoding="utf-8") as out:
        while True:
            now = time.monotonic()
            if PROBES.exists():
                with PROBES.open(encoding="utf-8") as probes:
                    probes.seek(read)
                    for line in probes:
                        if line.endswith("\n"):
                            probe = json.loads(line)
                            pending[probe["marker"]] = probe
                            read += len(line.encode("utf-8"))
            try:
                await _poll(engine, out, pending)
                if now >= next_sample:
                    next_sample = now + SAMPLE_SECONDS
                    await _sample(engine, out)
            except Exception as error:  # a busy database: said in the output, tried again next time
                _write(out, t=time.time(), error=f"{type(error).__name__}: {error}"[:300])
            if now >= next_flush:
                next_flush = now + FLUSH_SECONDS
                taken = _timings[:]
                del _timings[: len(taken)]
                for stage, at, elapsed in taken:
                    _write(out, t=at, stage=stage, ms=elapsed)
                out.flush()
            await asyncio.sleep(POLL_SECONDS)


async def _trace_growth() -> None:
    """The allocations grown since the start, by line, rewritten every ``TRACE_SECONDS`` (a
    snapshot's own work runs on a thread; the bot's loop only waits for it)."""
    ignored = (
        tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
    )
    first = (await asyncio.to_thread(tracemalloc.take_snapshot)).filter_traces(ignored)
    while True:
        await asyncio.sleep(TRACE_SECONDS)
        now = (await asyncio.to_thread(tracemalloc.take_snapshot)).filter_traces(ignored)
        grown = now.compare_to(first, "lineno")[:TRACE_LINES]
        current, _peak = tracemalloc.get_traced_memory()
        lines = [f"{time.time():.0f} traced {current / 2**20:.1f} MiB", *(str(stat) for stat in grown)]
        TRACE.write_text("\n".join(lines) + "\n", encoding="utf-8")


_tasks: list[asyncio.Task[None]] = []


@get_driver().on_startup
async def _start() -> None:
    logging.getLogger("cognition").addHandler(_TimingHandler())
    _tasks.append(asyncio.create_task(_run()))
    if tracemalloc.is_tracing():
        _tasks.append(asyncio.create_task(_trace_growth()))
