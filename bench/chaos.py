"""Chaos: the bot SIGKILLed at random moments while its writes and background work flow, then the
invariants after the restart's repair.

A worker process (``bench/_chaos_worker.py``: a real engine of its own) drives a deterministic
workload — ``end`` calls (historian jobs), transcript capture (batched into jobs), memory writes,
outbox drains, consolidation cycles; the historian's facts about people queue card merges — and
polls its queue and outbox like the bot. Each round starts it (its startup repair runs), waits a
seeded random moment (sometimes still inside the startup) and kills it with SIGKILL. After the
last round a final start drains everything and checks, against the worker's fsync'ed ledger:
every acknowledged ``end``/write has its fact and every captured turn went into a job (0 lost), no
fact active twice in a chat (0 duplicated), the vector index equal to the active SQL rows, no job
or outbox entry dead. The model and the API embedder are a fake OpenAI-compatible server on
127.0.0.1 answering by rule (the demo's replay rules).

``--faults`` adds service failures to the rounds: the embedder answering 500, timing out, slow;
on PostgreSQL the Chroma server killed (and restarted at the next round). Exit status 1 on any
violation.

    uv run python bench/chaos.py                      # 50 rounds, SQLite then PostgreSQL
    uv run python bench/chaos.py --rounds 5 --backend sqlite --seed 7
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO / "tests"))  # the fake OpenAI-compatible server, the Chroma server
sys.path.insert(0, str(HERE))

from _chaos_services import PgCluster  # noqa: E402
from _common import PG_BASE, pg_admin  # noqa: E402
from chroma_server import ChromaServer  # noqa: E402

WORKER = HERE / "_chaos_worker.py"
#: Workload steps per round (the workload ends before the last rounds on a fast machine: those
#: kill the worker in its startup repair and background polls).
STEPS_PER_ROUND = 12
#: Service failures of ``--faults``, one per odd round, applied once the worker has started:
#: the API embedder answering 500, timing out (5 s against its 3 s timeout), slow (1 s); the Chroma
#: server killed (PostgreSQL runs only; back at the next round); PostgreSQL crashed and restarted
#: (``pg_ctl restart -m immediate``, PostgreSQL runs only, on a cluster of the run's own).
FAULTS = ("embed_500", "embed_timeout", "embed_slow", "chroma_down", "pg_restart")


@dataclass
class Outcome:
    backend: str
    rounds: int = 0
    kills: int = 0
    kills_in_startup: int = 0
    exited_early: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    error: str = ""

    @property
    def violations(self) -> list[str]:
        found = [f"worker exited on its own {self.exited_early}×"] if self.exited_early else []
        if self.error:
            return [*found, self.error]
        r = self.result
        found += r.get("lost", []) + [f"duplicate: {item}" for item in r.get("duplicates", [])]
        found += [f"vectors: {item}" for item in r.get("vector_mismatches", [])]
        left = {state: count for state, count in r.get("jobs_left", {}).items() if count}
        if left:
            found.append(f"jobs left after the drain: {left}")
        if r.get("outbox_pending") or r.get("outbox_dead"):
            found.append(f"outbox left: pending {r.get('outbox_pending')}, dead {r.get('outbox_dead')}")
        return found


def model_server() -> Any:
    """The fake model (historian, card merge and cycle answered by the demo's replay rules) and
    the API embedder, on 127.0.0.1."""
    from fake_openai import FakeOpenAI

    from amrita_plugin_cognition.cli.demo_card_model import PROFILE_TOOL, card_answer
    from amrita_plugin_cognition.cli.demo_cycle_model import STOP_TOOL, cycle_answer
    from amrita_plugin_cognition.cli.loopback import message_text, tool_call_message
    from amrita_plugin_cognition.cli.replay_model import HISTORIAN_TOOL, historian_facts, offered_tools

    def respond(body: dict[str, Any]) -> dict[str, Any] | None:
        messages = list(body.get("messages") or [])
        offered = offered_tools(body)
        user = "\n".join(message_text(m) for m in messages if m.get("role") == "user")
        if HISTORIAN_TOOL in offered:
            return tool_call_message(HISTORIAN_TOOL, {"facts": historian_facts(user)}, "call_historian")
        if PROFILE_TOOL in offered:
            system = "\n".join(message_text(m) for m in messages if m.get("role") == "system")
            return tool_call_message(PROFILE_TOOL, card_answer(system, user), "call_profile")
        if STOP_TOOL in offered:
            name, arguments = cycle_answer(messages, offered)
            return tool_call_message(name, arguments, "call_cycle")
        return None

    server = FakeOpenAI(dimension=64)
    server.responder = respond
    # a worker killed mid-request leaves a broken pipe: expected here, not a traceback on the terminal
    server.server._server.handle_error = lambda request, address: None
    server.start()
    return server


class Run:
    """One backend's rounds: its home, database, Chroma, ledger."""

    def __init__(self, backend: str, model: Any, rounds: int, seed: int, faults: bool, log: Any) -> None:
        self.backend = backend
        self.model = model
        self.rounds = rounds
        self.rng = random.Random(seed)
        self.seed = seed
        self.faults = faults
        self.log = log
        self.home = Path(tempfile.mkdtemp(prefix=f"cognition-chaos-{backend}-"))
        self.ledger = self.home / "ledger.txt"
        self.database = f"cognition_chaos_{uuid.uuid4().hex[:10]}"
        self.chroma: ChromaServer | None = None
        self.cluster: PgCluster | None = None
        self.current: subprocess.Popen[str] | None = None
        self.url = f"sqlite+aiosqlite:///{self.home / 'cognition.sqlite3'}"

    def worker(self, mode: str) -> subprocess.Popen[str]:
        port = self.chroma.port if self.chroma else 0
        self.current = subprocess.Popen(
            [sys.executable, str(WORKER), mode, self.url, str(self.home), self.model.base_url, str(port),
             str(self.ledger), str(self.rounds * STEPS_PER_ROUND), str(self.seed)],
            stdout=subprocess.PIPE, stderr=self.log, text=True, cwd=str(self.home),
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )  # fmt: skip
        return self.current

    def setup(self) -> None:
        if self.backend == "postgres":
            base = PG_BASE
            if self.faults:  # restarted mid-write: a cluster of this run's own, never the shared server
                self.cluster = PgCluster(Path(tempfile.mkdtemp(prefix="cognition-chaos-pg-")))
                self.cluster.start()
                base = self.cluster.url
            asyncio.run(pg_admin(f'CREATE DATABASE "{self.database}"', base))
            self.url = f"{base}/{self.database}"
            self.chroma = ChromaServer(self.home / "chroma-server", log=self.home / "chroma.log")
            self.chroma.start()
        process = self.worker("setup")
        _out, _ = process.communicate(timeout=300)
        if process.returncode != 0:
            raise RuntimeError(f"migrations failed (exit {process.returncode}); see the log")

    def teardown(self) -> None:
        if self.current is not None and self.current.poll() is None:  # a round cut by an error
            self.current.kill()
            self.current.wait(60)
        if self.chroma is not None:
            self.chroma.kill()
        if self.cluster is not None:
            self.cluster.stop()
            shutil.rmtree(self.cluster.folder, ignore_errors=True)
        elif self.backend == "postgres":
            try:
                asyncio.run(pg_admin(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)'))
            except Exception as error:  # reported, the run's outcome stands
                print(f"could not drop {self.database}: {error}", file=sys.stderr)
        shutil.rmtree(self.home, ignore_errors=True)

    def fault_for(self, number: int) -> str:
        if not self.faults or number % 2 == 0:
            return ""
        kinds = [
            kind
            for kind in FAULTS
            if (kind != "chroma_down" or self.chroma is not None) and (kind != "pg_restart" or self.cluster is not None)
        ]
        return kinds[(number // 2) % len(kinds)]

    def apply_fault(self, fault: str) -> None:
        self.model.embeddings_down = fault == "embed_500"
        self.model.embeddings_down_status = 500
        self.model.embeddings_delay = {"embed_timeout": 5.0, "embed_slow": 1.0}.get(fault, 0.0)

    def one_round(self, number: int, outcome: Outcome, deadline: float) -> None:
        fault = self.fault_for(number)
        if self.chroma is not None and not self.chroma.running:
            self.chroma.start()  # killed in the round before: back
        self.apply_fault("")
        process = self.worker("work")
        in_startup = self.rng.random() < 0.2 and not fault
        delay = self.rng.uniform(0.3, 4.0) if in_startup else self.rng.uniform(0.1, 5.0)
        if fault:  # long enough for a timed-out call (3 s) to time out before the kill
            delay = self.rng.uniform(4.0, 8.0)
        started = False
        waited = 0.0
        assert process.stdout is not None
        if in_startup:
            threading.Thread(target=process.stdout.read, daemon=True).start()
        else:
            for line in process.stdout:  # until the engine started (or the process died); NoneBot logs here too
                if line.strip() == "started":
                    started = True
                    break
            threading.Thread(target=process.stdout.read, daemon=True).start()  # a full pipe must not stall it
            if not started:  # its stdout ended: it died before its engine started
                outcome.exited_early += 1
                process.kill()
                process.wait(60)
                return
            if fault:
                outcome.faults[fault] = outcome.faults.get(fault, 0) + 1
                self.apply_fault(fault)
                if fault in ("chroma_down", "pg_restart"):
                    waited = delay / 2
                    time.sleep(waited)
                if fault == "chroma_down" and self.chroma is not None:
                    self.chroma.kill()  # the worker goes on with the server gone, then dies itself
                elif fault == "pg_restart" and self.cluster is not None:
                    self.cluster.restart()  # a crash mid-write: connections cut, WAL recovery, back
        time.sleep(max(0.0, min(delay - waited, deadline - time.monotonic())))
        if process.poll() is not None:
            outcome.exited_early += 1
        else:
            process.send_signal(signal.SIGKILL)
            process.wait(60)
            outcome.kills += 1
            outcome.kills_in_startup += int(not started)

    def final(self, outcome: Outcome) -> None:
        self.apply_fault("")
        if self.chroma is not None and not self.chroma.running:
            self.chroma.start()
        process = self.worker("final")
        out, _ = process.communicate(timeout=600)
        lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
        if process.returncode != 0 or not lines:
            outcome.error = f"the final start failed (exit {process.returncode}); see the log"
            return
        outcome.result = json.loads(lines[-1][len("RESULT ") :])


def run_backend(backend: str, rounds: int, seed: int, faults: bool, time_limit: float, log_path: Path) -> Outcome:
    from rich.progress import Progress, TimeElapsedColumn

    outcome = Outcome(backend)
    model = model_server()
    began = time.monotonic()
    deadline = began + time_limit
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(f"=== {backend} seed={seed} rounds={rounds} faults={faults}\n")
        log.flush()
        run = Run(backend, model, rounds, seed, faults, log)
        try:
            run.setup()
            with Progress(*Progress.get_default_columns(), TimeElapsedColumn(), transient=True) as progress:
                task = progress.add_task(f"{backend}: rounds", total=rounds)
                for number in range(rounds):
                    if time.monotonic() >= deadline:
                        break
                    run.one_round(number, outcome, deadline)
                    outcome.rounds += 1
                    progress.advance(task)
                progress.update(task, description=f"{backend}: final drain and checks")
                run.final(outcome)
        except Exception as error:
            outcome.error = f"{type(error).__name__}: {error}"
        finally:
            run.teardown()
            model.stop()
    outcome.seconds = time.monotonic() - began
    return outcome


def print_table(outcomes: list[Outcome], seed: int) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"chaos (seed {seed})")
    for column in ("backend", "rounds", "kills (startup)", "faults", "steps done/begun", "jobs enqueued",
                   "jobs left", "lost", "duplicates", "vector mismatches", "final drain s", "time s"):  # fmt: skip
        table.add_column(column)
    for o in outcomes:
        r = o.result
        table.add_row(
            o.backend,
            str(o.rounds),
            f"{o.kills} ({o.kills_in_startup})",
            ", ".join(f"{k}×{v}" for k, v in sorted(o.faults.items())) or "-",
            f"{r.get('steps_done', '?')}/{r.get('steps_begun', '?')}",
            str(r.get("jobs_enqueued", "?")),
            str(sum(r.get("jobs_left", {}).values())) if r else "?",
            str(len(r.get("lost", []))) if r else "?",
            str(len(r.get("duplicates", []))) if r else "?",
            str(len(r.get("vector_mismatches", []))) if r else "?",
            str(r.get("drain_seconds", "?")),
            f"{o.seconds:.0f}",
        )
    console = Console(width=max(150, Console().width))
    console.print(table)
    for o in outcomes:
        for violation in o.violations:
            console.print(f"[red]VIOLATION[/red] {o.backend}: {violation}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--faults", action="store_true", help="embedder 500/timeout/slow, Chroma server killed, PostgreSQL restarted"
    )
    parser.add_argument("--time-limit", type=float, default=1800.0, help="seconds of rounds per backend at most")
    parser.add_argument("--json", type=Path, help="also write each backend's outcome here")
    parser.add_argument("--log", type=Path, default=Path(tempfile.gettempdir()) / "cognition-chaos.log")
    args = parser.parse_args()
    backends = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    outcomes = []
    for backend in backends:
        print(f"{backend}: {args.rounds} rounds (worker log: {args.log})", flush=True)
        outcomes.append(run_backend(backend, args.rounds, args.seed, args.faults, args.time_limit, args.log))
    print_table(outcomes, args.seed)
    if args.json:
        args.json.write_text(
            json.dumps([{**asdict(o), "violations": o.violations} for o in outcomes], ensure_ascii=False, indent=1),
            encoding="utf-8",
        )
    return 1 if any(o.violations for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
