"""Estimate admission on sentences it has not seen, from the project's own history.

    uv run python scripts/admission_unseen_estimate.py

Every ``tests/data/admission_zh_holdout*.jsonl`` from the second on was written by someone who had
not read the rules, and was used to improve them only after it was measured. So for each such
set, this script takes the rules as they were *before* the set was added (``git archive`` of the
commit's parent, run in a subprocess), and the learned models trained *without* the set (nor the
sets added with it, ``scripts/train_admission_model.py``), and counts on the set what the two
together catch and refuse: the request and credential models where the old rules said nothing,
and today's check on the old rules' requests (``intent.overruled``). The models' gates are
today's. Needs the git history (not a shallow clone); writes nothing in the repository.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import train_admission_model as training  # noqa: E402

from amrita_plugin_cognition.domain.admission import foreign, intent  # noqa: E402

FIRST_UNSEEN = 2  # admission_zh_holdout2 onwards: written blind, measured once before use
_VERDICTS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from amrita_plugin_cognition.domain.admission import admit
try:  # the rules alone: that commit's own models (trained with sets up to then) are not asked
    from amrita_plugin_cognition.domain.admission.learned import LinearModel
    LinearModel.says_yes = lambda self, text: False
except ImportError:  # a commit before the models
    pass
rows = json.loads(sys.stdin.read())
out = {}
for row in rows:
    verdict = admit(row["text"])
    out[row["id"]] = [verdict.admit, verdict.reason]
print(json.dumps(out))
"""


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def _added_in(name: str) -> str:
    return _git("log", "--diff-filter=A", "--format=%H", "--", f"tests/data/{name}.jsonl").splitlines()[-1]


def _old_verdicts(commit: str, rows: list[dict]) -> dict[str, list]:
    """The rules of ``commit`` on ``rows`` (in a subprocess, from an archive of that commit)."""
    archive = subprocess.run(
        ["git", "archive", commit, "amrita_plugin_cognition"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    with tempfile.TemporaryDirectory() as folder:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data") if sys.version_info >= (3, 12) else tar.extractall(folder)
        done = subprocess.run(
            [sys.executable, "-c", _VERDICTS, folder],
            input=json.dumps(rows),
            cwd=folder,
            check=True,
            capture_output=True,
            text=True,
        )
    return json.loads(done.stdout)


def _overruled(views: dict[str, str], models: dict) -> bool:
    """Whether today's check would overrule a request the old rules read in Chinese (a line with a
    secret is left refused: whether that commit's rules caught the secret is not known here)."""
    view = views["request_check"]
    foreign_request = intent.has_memory_cue(view) and foreign.foreign_rules_ask(view)
    return not foreign_request and intent.overruled(view, models["request_check"])


def main() -> None:
    sets = training.load_sets()
    unseen = sorted(
        (name for name in sets if name.removeprefix("admission_zh_holdout").isdigit()),
        key=lambda name: int(name.removeprefix("admission_zh_holdout")),
    )
    unseen = [name for name in unseen if int(name.removeprefix("admission_zh_holdout")) >= FIRST_UNSEEN]
    added = {name: _added_in(name) for name in sets}
    totals = {key: [0, 0] for key in ("credential", "do_not_remember", "false_rejections")}
    rules_totals = {key: [0, 0] for key in totals}
    for name in unseen:
        rows = sets[name]
        old = _old_verdicts(f"{added[name]}^", rows)
        together = {other for other in sets if added[other] == added[name]}
        rest = [row for other, lines in sets.items() if other not in together for row in lines]
        models = {key: training.train(task, rest) for key, task in training.TASKS.items()}
        counts = {key: [0, 0] for key in totals}
        rules = {key: [0, 0] for key in totals}
        for row in rows:
            admitted, reason = old[row["id"]]
            views = {key: task.view(row["text"]) for key, task in training.TASKS.items()}
            says = any(
                training.TASKS[key].consulted(views[key]) and models[key].says_yes(views[key])
                for key in ("do_not_remember", "credential")
            )
            if reason == "do_not_remember" and row.get("reason") != "credential" and _overruled(views, models):
                admitted, reason = True, ""  # a rule's request the check model overrules
            if row["admit"]:
                key, by_rules = "false_rejections", (not admitted) or reason == "credential"
            elif row.get("reason") == "credential":
                key, by_rules = "credential", (not admitted) or reason == "credential"
            else:
                key, by_rules = "do_not_remember", not admitted
            for table, hit in ((counts, by_rules or says), (rules, by_rules)):
                table[key][0] += hit
                table[key][1] += 1
        for table, total in ((counts, totals), (rules, rules_totals)):
            for key in total:
                total[key][0] += table[key][0]
                total[key][1] += table[key][1]
        shown = {key: round(hit / max(1, count), 3) for key, (hit, count) in counts.items()}
        alone = {key: round(hit / max(1, count), 3) for key, (hit, count) in rules.items()}
        print(f"{name} (rules of {added[name][:7]}^): rules + models {shown}; rules alone {alone}", flush=True)
    for label, total in (("rules + models", totals), ("rules alone", rules_totals)):
        figures = {key: f"{hit}/{count} = {hit / max(1, count):.3f}" for key, (hit, count) in total.items()}
        print(f"all unseen sets, {label}: {figures}")


if __name__ == "__main__":
    main()
