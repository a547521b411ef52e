"""Wall time of the CLI's read commands, in a fresh bot project and on a standalone home.

The four commands of issue 23 (``status``, ``inspect``, ``jobs list``, ``profile show``) each
start light (``cli/boot.prepare_reading``: NoneBot without a driver on the project's own
configuration, this package alone, no migration, the engine not started). Each is timed as a
user runs it, a fresh process from start to exit, in rounds that also time the floor:

* in a bot project: ``ambot cognition <command>`` beside ``ambot --help`` (ambot's own start,
  which every ``ambot`` command pays); the project is made the way ``test_ambot.py`` makes one,
  migrated with ``ambot orm upgrade`` and given a little data (two chats' facts, a pending
  historian job, a card with a kept revision) by the plugin's engine;
* standalone: ``python -m amrita_plugin_cognition <command> --home DIR`` beside
  ``python -c pass`` and ``python -m amrita_plugin_cognition --help``.

Then the same commands on the full start (``COGNITION_CLI_FULL_BOOT=1``: the whole bot under
ambot, the upgrade and the engine start standalone, as every command did before), for the ratio.
Medians of the rounds; every round runs each command once, one after the other, so all see the
same machine load. Target: each read command < 2 s in the bot project.

    uv run python bench/cli_latency.py [--quick] [--runs N] [--full-runs N]

Needs ``ambot`` (ambot-inlinectl) beside this interpreter for the bot-project half. No network.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import clean_env, machine_line, parse_args
from _project import PROJECT_INIT, new_project, seed_script

TARGET_SECONDS = 2.0
AMBOT = Path(sys.executable).with_name("ambot")
REPO = Path(__file__).resolve().parent.parent

#: What the commands find: facts in a group and a private chat, a pending job, a card with a revision.
SEED = """
from amrita_plugin_cognition.api import Card, ChatContext, InputMessage, MemoryDraft, Scope

now = datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc)
group, private = Scope("group", "20001"), Scope("private", "10001")
drafts = [MemoryDraft(text=f"小明第{n}次提到喜欢吃火锅", scope=group, speaker_id="10001", speaker_name="小明")
          for n in range(1, 21)]
await engine.memories.remember("90001", drafts, now=now)
cat = MemoryDraft(text="小明的猫叫年糕", scope=private, speaker_id="10001")
await engine.memories.remember("90001", [cat], now=now)
chat = ChatContext("90001", group, "10002", "阿杰")
await engine.turns.end(chat, "聊了周末的安排", ["阿杰周末要去爬山"],
                       batch=[InputMessage("m1", "10002", "阿杰", "我周末去爬山", now)], now=now)
for hours, body in ((0, "喜欢火锅。"), (1, "喜欢火锅，下个月去成都。")):
    when = now + timedelta(hours=hours)
    card = Card("90001", "user", "10001", "group", name="小明", body=body, updated_at=when)
    await engine.profiles.save(card, now=when)
"""

COMMANDS = {
    "status": ["status", "--json"],
    "inspect": ["inspect", "--json"],
    "jobs list": ["jobs", "list", "--json"],
    "profile show": ["profile", "show", "90001", "user", "10001", "--json"],
}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one process, start to exit. On a busy
    machine the wall time grows with the others' load; the CPU time much less so."""
    cpu, started = children_cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    seconds, cpu = time.perf_counter() - started, children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds, cpu


def seed(cwd: Path, init: str, env: dict[str, str]) -> None:
    script = seed_script(SEED, init)
    done = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"seeding failed:\n{done.stderr[-3000:]}")


Medians = dict[str, tuple[float, float]]


def rounds(
    floors: dict[str, list[str]], commands: dict[str, list[str]], cwd: Path, env: dict[str, str], count: int
) -> Medians:
    """Median wall and CPU seconds of each floor and command over ``count`` rounds (each round
    runs all once, one after the other)."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in [*floors, *commands]}
    for _ in range(count):
        for name, argv in [*floors.items(), *commands.items()]:
            times[name].append(run(argv, cwd, env))
    return {
        name: (statistics.median(wall for wall, _ in values), statistics.median(cpu for _, cpu in values))
        for name, values in times.items()
    }


def table(title: str, floor: str, light: Medians, full: Medians | None) -> bool:
    print(f"\n{title}")
    print(f"  floor {floor}: {light[floor][0]:.2f} s wall, {light[floor][1]:.2f} s CPU")
    header = f"  {'command':<14} {'wall s':>7} {'/ floor':>8} {'CPU s':>6}"
    header += f" {'full wall':>10} {'full CPU':>9} {'full/light':>10}"
    print(f"{header}  target < {TARGET_SECONDS:.0f} s")
    met = True
    for name in COMMANDS:
        wall, cpu = light[name]
        ok = wall < TARGET_SECONDS
        met = met and ok
        full_text = (
            f"{full[name][0]:10.2f} {full[name][1]:9.2f} {full[name][0] / wall:10.1f}"
            if full
            else f"{'-':>10} {'-':>9} {'-':>10}"
        )
        print(
            f"  {name:<14} {wall:7.2f} {wall / light[floor][0]:8.2f} {cpu:6.2f} {full_text}  {'ok' if ok else 'OVER'}"
        )
    return met


def bot_project(work: Path, runs: int, full_runs: int) -> bool:
    project = new_project(work / "bot", "latencybot")
    env = clean_env()
    run([str(AMBOT), "orm", "upgrade"], project, env)
    seed(project, PROJECT_INIT, env)
    floors = {"ambot --help": [str(AMBOT), "--help"]}
    commands = {name: [str(AMBOT), "cognition", *argv] for name, argv in COMMANDS.items()}
    light = rounds(floors, commands, project, env, runs)
    full = rounds(floors, commands, project, clean_env(COGNITION_CLI_FULL_BOOT="1"), full_runs) if full_runs else None
    return table(
        f"bot project, ambot cognition … (median of {runs}; full start: {full_runs})", "ambot --help", light, full
    )


def standalone(work: Path, runs: int, full_runs: int) -> None:
    home = work / "home"
    env = clean_env()
    module = [sys.executable, "-m", "amrita_plugin_cognition"]
    run([*module, "jobs", "list", "--home", str(home)], work, env)  # creates and migrates the folder
    init = (
        f"os.environ['COGNITION_STANDALONE_HOME'] = {str(home)!r}\n"
        "from amrita_plugin_cognition.standalone import init_engine_only\n"
        f"init_engine_only(__import__('pathlib').Path({str(home)!r}), 'WARNING')"
    )
    seed(work, init, env)
    floors = {"python -c pass": [sys.executable, "-c", "pass"], "--help": [*module, "--help"]}
    commands = {name: [*module, *argv, "--home", str(home)] for name, argv in COMMANDS.items()}
    light = rounds(floors, commands, work, env, runs)
    full = rounds(floors, commands, work, clean_env(COGNITION_CLI_FULL_BOOT="1"), full_runs) if full_runs else None
    table(
        f"standalone, python -m amrita_plugin_cognition … --home (median of {runs}; full start: {full_runs}; "
        f"python -c pass {light['python -c pass'][0]:.2f} s)",
        "--help",
        light,
        full,
    )


def main() -> None:
    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--runs", type=int, default=5, help="rounds of the light start (default 5)")
        parser.add_argument("--full-runs", type=int, default=3, help="rounds of the full start (0: skip)")

    args = parse_args(__doc__.splitlines()[0], options)
    runs, full_runs = (1, 0) if args.quick else (args.runs, args.full_runs)
    print(machine_line())
    work = Path(tempfile.mkdtemp(prefix="cognition-bench-cli-"))
    try:
        met = True
        if AMBOT.exists():
            met = bot_project(work, runs, full_runs)
        else:
            print(f"\n(no {AMBOT}: the bot-project half is skipped)")
        standalone(work, runs, full_runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\ntarget (each read command < {TARGET_SECONDS:.0f} s in the bot project): {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
