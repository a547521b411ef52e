"""The process ``bench/chaos.py`` kills: a real engine (its own process, SQLite or PostgreSQL, embedded
Chroma or a Chroma server, the API embedder and the chat model on the bench's fake server on
127.0.0.1) driving a deterministic workload, then polling its queue and outbox like the bot does.

Each start runs the bot's startup repair (fingerprint check, index repair; the historian recovers
expired leases at its first tick), then resumes the workload after the last step it *began*
(a step cut by SIGKILL is not redone: the user's message was lost with the process, as in the bot).
Before a step it appends ``B <step> <kind>`` to the ledger and fsyncs, after it ``D <step>``: the
ledger is what the checker holds SQL against.

Modes: ``setup`` (migrations only), ``work`` (until killed), ``final`` (no workload: drain
everything, then print the invariants as one JSON line).

Usage: python _chaos_worker.py MODE DATABASE_URL HOME MODEL_BASE_URL CHROMA_PORT(0: embedded) LEDGER STEPS SEED
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

PRESET = "cognition-chaos"
BOT = "chaos-bot"
USERS = (("10001", "小明"), ("10002", "小红"), ("10003", "阿强"))
GROUPS = ("30001", "30002")
#: Every step's text is drawn from these words (seeded): distinct steps, distinct facts.
WORDS = (  # noqa: SIM905 - a word list reads better as one string
    "火锅 羽毛球 吉他 围棋 咖啡 登山 摄影 书法 滑雪 潜水 烘焙 骑行 钓鱼 象棋 油画 跑步 游泳 露营 魔方 陶艺 "
    "茶艺 篮球 足球 网球 瑜伽 舞蹈 相声 京剧 园艺 编程 天文 航模 剪纸 刺绣 跳绳 拳击 击剑 马术 射箭 冲浪"
).split()
CITIES = "成都 重庆 杭州 苏州 西安 大理 厦门 青岛 昆明 长沙 武汉 南京 拉萨 桂林 三亚 哈尔滨".split()  # noqa: SIM905
#: The final drain waits this long on the real clock (leases of the killed worker are 10 s), then
#: runs what a retry backoff put off on a clock moved ``FORWARD`` ahead.
FORWARD_AFTER_SECONDS = 25.0
FORWARD = timedelta(hours=2)
#: The workload's cycle of steps (a consolidation cycle every 12th step).
KINDS = ("end", "capture", "write", "end", "drain", "capture", "end", "write", "capture", "end", "drain", "cycle")


def step_kind(step: int) -> str:
    return KINDS[step % len(KINDS)]


def step_text(seed: int, step: int) -> tuple[str, str, str]:
    """(user id, user name, words) of a step: the same for every run with this seed."""
    rng = random.Random(seed * 100_003 + step)
    user, name = USERS[rng.randrange(len(USERS))]
    words = "、".join(rng.sample(WORDS, 3))
    return user, name, f"在{rng.choice(CITIES)}学{words}（记号{step}）"


def fact_marker(step: int) -> str:
    return f"（记号{step}）"


def read_ledger(path: Path) -> tuple[dict[int, str], set[int]]:
    begun: dict[int, str] = {}
    done: set[int] = set()
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == "B":
                begun[int(parts[1])] = parts[2]
            elif len(parts) == 2 and parts[0] == "D":
                done.add(int(parts[1]))
    return begun, done


def ledger_findings(
    begun: dict[int, str], done: set[int], active: list[tuple[str, str, str]], turns: dict[str, bool]
) -> tuple[list[str], list[str]]:
    """(lost, duplicated) against the ledger: an acknowledged ``end`` or write without its active
    fact, an acknowledged capture not in the transcript or still waiting for its job; a text
    active twice in one chat, or a step's fact active twice. ``active``: (scope kind, scope id,
    text) of every active fact; ``turns``: message id -> still waiting."""
    seen: dict[tuple[str, str, str], int] = {}
    for key in active:
        seen[key] = seen.get(key, 0) + 1
    duplicates = sorted(f"{kind}:{scope}:{text}" for (kind, scope, text), count in seen.items() if count > 1)
    texts = [text for _kind, _scope, text in active]
    lost: list[str] = []
    for step, kind in sorted(begun.items()):
        if kind in ("end", "write"):
            marker = fact_marker(step)
            holding = [text for text in texts if marker in text and (kind == "write") == ("说自己" in text)]
            if step in done and not holding:
                lost.append(f"step {step} ({kind}): no active fact")
            if len(holding) > 1:
                duplicates.append(f"step {step} ({kind}): {len(holding)} facts")
        elif kind == "capture":
            message_id = f"t{step}"
            if step in done and message_id not in turns:
                lost.append(f"step {step} (capture): turn not in the transcript")
            elif turns.get(message_id):
                lost.append(f"step {step} (capture): turn still waiting for a job")
    return lost, duplicates


class Ledger:
    def __init__(self, path: Path) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - held for the process's life

    def append(self, line: str) -> None:
        self._file.write(line + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())


def config_data(model_url: str, chroma_port: int) -> dict[str, Any]:
    chroma = {"mode": "server", "host": "127.0.0.1", "port": chroma_port} if chroma_port else {"mode": "embedded"}
    return {
        "chroma": chroma,
        "embedder": {
            "provider": "openai",
            "url": model_url,
            "model": "fake-embedding",
            "dimensions": 64,
            "timeout_seconds": 3,
        },
        "llm": {"preset": PRESET, "timeout_seconds": 5},
        "historian": {
            "capture": "both",
            "max_concurrency": 2,
            "job_lease_seconds": 10,
            "job_max_attempts": 21,  # a fault phase must not make a job dead: retried, never given up
            "poll_interval_seconds": 0.5,
            "transcript_batch_turns": 3,
            "transcript_pause_seconds": 1,
        },
        "profiles": {"merge": True, "merge_window_seconds": 0},
        "outbox_interval_seconds": 1,
        "outbox_lease_seconds": 10,  # a killed drain's rows are due again 10 s later (the least allowed)
    }


def init(mode: str, database_url: str, home: Path) -> None:
    from amrita_plugin_cognition.standalone import init_engine_only

    home.mkdir(parents=True, exist_ok=True)
    init_engine_only(home, "ERROR", database_url)
    if mode == "setup":
        from amrita_plugin_cognition.cli.runtime import upgrade_database

        worker = threading.Thread(target=upgrade_database)  # it runs its own event loop
        worker.start()
        worker.join()


async def open_engine(home: Path, model_url: str, chroma_port: int) -> Any:
    from amrita_core import ModelPreset, PresetManager
    from nonebot_plugin_orm import get_session

    from amrita_plugin_cognition.api import CognitionConfig, build_engine
    from amrita_plugin_cognition.cli.loopback import chat_preset

    PresetManager().add_preset(ModelPreset.model_validate(chat_preset(PRESET, "chaos-model", model_url, "sk", False)))
    config = CognitionConfig.model_validate(config_data(model_url, chroma_port))
    engine = build_engine(config, home / "data", get_session)
    await engine.start()
    # the bot's startup step (bot/__init__.py ``_prepare_engine``): fingerprint, then index repair
    await engine.index.check_fingerprint()
    await engine.index.repair()
    return engine


async def poll(engine: Any) -> None:
    """What the bot's scheduler does: the historian's poll and the outbox catch-up."""
    while True:
        try:
            await engine.historian.tick()
            await engine.index.drain()
        except Exception as error:  # a database or index down for a moment: the next poll retries
            print(f"poll: {type(error).__name__}: {error}"[:300], file=sys.stderr, flush=True)
        await asyncio.sleep(0.3)


async def run_step(engine: Any, seed: int, step: int) -> None:
    from amrita_plugin_cognition.api import ChatContext, InputMessage, Operator, Scope

    kind = step_kind(step)
    user, name, words = step_text(seed, step)
    scope = Scope("group", GROUPS[step % len(GROUPS)])
    chat = ChatContext(BOT, scope, user, name, group_role="admin")
    now = datetime.now(UTC)
    if kind == "end":
        said = f"我最近{words}"
        batch = [InputMessage(f"e{step}", user, name, said, now)]
        await engine.turns.end(chat, "", [f"QQ号{user}（昵称{name}）最近{words}"], batch=batch)
    elif kind == "capture":
        message = InputMessage(f"t{step}", user, name, f"跟你说，我上周{words}", now)
        await engine.turns.record(chat, message, "听起来很有意思！", ended=False)
    elif kind == "write":
        await engine.memories.write(chat, "user", f"{name}说自己{words}")
    elif kind == "drain":
        await engine.index.drain()
    elif kind == "cycle":
        await engine.consolidation.run_now(Operator("chaos"), BOT, scope)


async def work(engine: Any, ledger_path: Path, steps: int, seed: int) -> None:
    begun, _done = read_ledger(ledger_path)
    ledger = Ledger(ledger_path)
    poller = asyncio.ensure_future(poll(engine))
    print("started", flush=True)
    for step in range(max(begun, default=-1) + 1, steps):
        ledger.append(f"B {step} {step_kind(step)}")
        try:
            await run_step(engine, seed, step)
        except Exception as error:  # refused or failed (a fault phase): not acknowledged, said so
            print(f"step {step}: {type(error).__name__}: {error}"[:300], file=sys.stderr, flush=True)
            ledger.append(f"F {step}")
            await asyncio.sleep(0.5)  # a service down for a moment must not burn the whole workload at once
            continue
        ledger.append(f"D {step}")
        await asyncio.sleep(0.05)  # turns arrive one after another, not all at once
    print("workload done", flush=True)
    await poller  # until killed


async def final(engine: Any, ledger_path: Path, seed: int, deadline_seconds: float) -> dict[str, Any]:
    """Everything drained (the dead process's leases expire first), then the invariants. Work a
    failure put off (the retry backoff doubles from 5 s: after a fault phase a row may wait minutes)
    is run on a clock moved forward past its next attempt once the leases have expired
    (``FORWARD_AFTER_SECONDS``); the result says when that was needed."""
    from sqlalchemy import func, select

    from amrita_plugin_cognition.store.models import (
        CycleRunRow,
        JobRow,
        MemoryRow,
        OutboxRow,
        ProfileRow,
        TranscriptRow,
    )

    started = time.monotonic()
    forwarded = False
    put_off: dict[str, int] = {}
    while time.monotonic() - started < deadline_seconds:
        moment = None
        if time.monotonic() - started > FORWARD_AFTER_SECONDS:
            if not forwarded:  # what the backoff put off, said in the result
                async with engine.session() as session:
                    put_off = {
                        f"jobs (attempts {attempts})": count
                        for attempts, count in (
                            await session.execute(
                                select(JobRow.attempts, func.count())
                                .where(JobRow.state != "failed")
                                .group_by(JobRow.attempts)
                            )
                        ).all()
                    }
                    put_off["outbox rows"] = (
                        await session.execute(
                            select(func.count()).select_from(OutboxRow).where(OutboxRow.state == "pending")
                        )
                    ).scalar()
            forwarded = True
            moment = datetime.now(UTC) + FORWARD
        await engine.jobs.flush_transcripts(moment, everything=True)
        await engine.historian.tick(moment)
        await engine.historian.settle()
        await engine.index.drain(now=moment)
        async with engine.session() as session:
            left = (
                await session.execute(select(func.count()).select_from(JobRow).where(JobRow.state != "failed"))
            ).scalar()
            outbox = (
                await session.execute(select(func.count()).select_from(OutboxRow).where(OutboxRow.state == "pending"))
            ).scalar()
            waiting = (
                await session.execute(select(func.count()).select_from(TranscriptRow).where(TranscriptRow.pending))
            ).scalar()
        if not left and not outbox and not waiting:
            break
        await asyncio.sleep(0.5)
    drain_seconds = time.monotonic() - started
    await engine.settle()
    begun, done = read_ledger(ledger_path)
    async with engine.session() as session:
        jobs = (await session.execute(select(JobRow.state, func.count()).group_by(JobRow.state))).all()
        dead_outbox = (
            await session.execute(select(func.count()).select_from(OutboxRow).where(OutboxRow.state == "dead"))
        ).scalar()
        pending_outbox = (
            await session.execute(select(func.count()).select_from(OutboxRow).where(OutboxRow.state == "pending"))
        ).scalar()
        active = (
            await session.execute(
                select(MemoryRow.scope_kind, MemoryRow.scope_id, MemoryRow.text).where(
                    MemoryRow.bot_id == BOT, MemoryRow.status == "active"
                )
            )
        ).all()
        cards = (
            await session.execute(select(func.count()).select_from(ProfileRow).where(ProfileRow.bot_id == BOT))
        ).scalar()
        cycles = (
            await session.execute(select(func.count()).select_from(CycleRunRow).where(CycleRunRow.bot_id == BOT))
        ).scalar()
        turns = {
            row.message_id: row.pending
            for row in (
                await session.execute(
                    select(TranscriptRow.message_id, TranscriptRow.pending).where(TranscriptRow.bot_id == BOT)
                )
            ).all()
        }
    lost, duplicates = ledger_findings(begun, done, [(row.scope_kind, row.scope_id, row.text) for row in active], turns)
    report = await engine.index_sync.missing_and_extra()  # a report only: repairs nothing
    mismatched = [
        f"{key}: {kind}"
        for kind, part in (("missing", report.missing), ("extra", report.extra))
        for key in part
        if part[key]
    ] + [f"{name}: unmapped" for name in report.unmapped]
    states = {state: count for state, count in jobs}
    return {
        "steps_begun": len(begun),
        "steps_done": len(done),
        "jobs_enqueued": sum(1 for step, kind in begun.items() if kind in ("end", "capture") and step in done),
        "jobs_left": states,
        "lost": lost,
        "duplicates": duplicates,
        "vector_mismatches": mismatched,
        "vector_missing": report.missing_count,
        "vector_extra": sum(len(ids) for ids in report.extra.values()),
        "outbox_pending": pending_outbox,
        "outbox_dead": dead_outbox,
        "active_facts": len(active),
        "cards": cards,
        "cycle_runs": cycles,
        "drain_seconds": round(drain_seconds, 1),
        "clock_forwarded": forwarded,
        "put_off_by_backoff": put_off,
    }


async def main(
    mode: str, url: str, home: Path, model_url: str, chroma_port: int, ledger: Path, steps: int, seed: int
) -> None:
    init(mode, url, home)
    if mode == "setup":
        print("migrated", flush=True)
        return
    engine = await open_engine(home, model_url, chroma_port)
    if mode == "work":
        await work(engine, ledger, steps, seed)
    else:
        result = await final(engine, ledger, seed, deadline_seconds=120)
        await engine.close()
        print("RESULT " + json.dumps(result, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    os.environ["COGNITION_ENGINE_ONLY"] = "1"  # set here: the checks below import this module
    os.environ["ANONYMIZED_TELEMETRY"] = "False"
    mode, url, home, model_url, port, ledger, steps, seed = sys.argv[1:9]
    asyncio.run(main(mode, url, Path(home), model_url, int(port), Path(ledger), int(steps), int(seed)))
    os._exit(0)
