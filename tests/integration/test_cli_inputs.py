"""Arguments the store could not take are refused before anything loads (issue 20, item 15): a
20-digit id (OverflowError on SQLite, int64 out of range on PostgreSQL), an actor longer than its
columns (accepted on SQLite, refused by PostgreSQL), a chat key whose id is no QQ number (accepted
and audited). Each ends with exit code 2 and one line naming the argument; the engine, the
database and the vector index are never loaded for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from engine_helpers import make_engine, new_bot

from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import Scope
from amrita_plugin_cognition.engine import erasure
from amrita_plugin_cognition.store.models import AuditRow, BarrierRow

HUGE = "9" * 20
#: (case, arguments, what the error line names)
REFUSED = [
    ("inspect_id", ["inspect", "--id", HUGE], "--id"),
    ("inspect_page", ["inspect", "--page", HUGE], "--page"),
    ("profile_restore", ["profile", "restore", "90001", "user", "10001", HUGE], "REVISION"),
    ("profile_show_revision", ["profile", "show", "90001", "user", "10001", "--revision", HUGE], "--revision"),
    ("memo_restore", ["memo", "restore", "90001", "group:20001", HUGE], "REVISION"),
    ("jobs_retry", ["jobs", "retry", HUGE], "JOB_IDS"),
    ("jobs_drop", ["jobs", "drop", HUGE, "--yes"], "JOB_IDS"),
    ("actor", ["delete-all", "--bot", "90001", "--chat", "group:20001", "--yes", "--actor", "操" * 200], "--actor"),
    ("chat_letters", ["delete-all", "--bot", "90001", "--chat", "group:abc", "--yes"], "--chat"),
    ("chat_kind", ["inspect", "--chat", "channel:20001"], "--chat"),
    ("memo_scope", ["memo", "history", "90001", "group:abc"], "SCOPE"),
    ("user_fullwidth", ["export", "--user", "１２３４５"], "--user"),
    ("bot_too_long", ["delete-all", "--bot", "9" * 40, "--everything", "--yes"], "--bot"),
]

PROBE = r"""
import json, sys
from click.testing import CliRunner
from amrita_plugin_cognition.cli.commands import cognition

home, cases = sys.argv[1], json.loads(sys.argv[2])
results = {}
for name, args in cases:
    result = CliRunner().invoke(cognition, [*args, "--home", home], prog_name="python -m amrita_plugin_cognition")
    results[name] = {"code": result.exit_code, "stdout": result.stdout, "stderr": result.stderr}
heavy = ("amrita_plugin_cognition.engine", "amrita_plugin_cognition.runtime", "chromadb", "sqlalchemy")
print(json.dumps({"results": results, "loaded": [name for name in heavy if name in sys.modules]}))
"""


@pytest.fixture(scope="module")
def refused(tmp_path_factory: pytest.TempPathFactory) -> dict:  # type: ignore[type-arg]
    """Every case in one fresh interpreter, as ``python -m amrita_plugin_cognition`` would run it."""
    home = tmp_path_factory.mktemp("cli-inputs") / "home"
    env = {key: value for key, value in os.environ.items() if not key.startswith("COGNITION_")}
    env["COGNITION_STANDALONE_HOME"] = str(home)
    cases = json.dumps([[name, args] for name, args, _ in REFUSED], ensure_ascii=False)
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, str(home), cases], capture_output=True, text=True, timeout=600, env=env
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.splitlines()[-1])


@pytest.mark.parametrize(("name", "names"), [(name, names) for name, _, names in REFUSED], ids=[c[0] for c in REFUSED])
def test_a_value_the_store_cannot_take_is_a_usage_error(refused: dict, name: str, names: str) -> None:  # type: ignore[type-arg]
    result = refused["results"][name]
    assert result["code"] == 2, result
    errors = [line for line in result["stderr"].splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and names in errors[0], result["stderr"]
    assert "Traceback" not in result["stderr"] and result["stdout"] == ""


def test_nothing_was_loaded_to_refuse_them(refused: dict) -> None:  # type: ignore[type-arg]
    assert refused["loaded"] == []


def test_the_actor_limit_fits_every_column_it_goes_into() -> None:
    from amrita_plugin_cognition.domain.governance import ACTOR_MAX_CHARS

    reason = f"{ErasureTarget.chat('1', Scope('group', '2')).action}:"  # the barriers' reason: action:actor
    assert len("delete_all_user:") == len(reason)
    assert ACTOR_MAX_CHARS + len(reason) <= BarrierRow.__table__.c.reason.type.length
    assert AuditRow.__table__.c.actor.type.length >= ACTOR_MAX_CHARS


async def test_an_actor_of_the_longest_allowed_length_is_stored_on_this_database(tmp_root, chroma_port) -> None:
    """Run on both backends: PostgreSQL refuses a value longer than its column."""
    from amrita_plugin_cognition.domain.governance import ACTOR_MAX_CHARS
    from amrita_plugin_cognition.domain.records import MemoryDraft
    from amrita_plugin_cognition.store import audit

    engine = await make_engine(tmp_root, chroma_port)
    bot = new_bot()
    scope = Scope("group", "20001")
    await engine.memories.remember(bot, [MemoryDraft(text="小明喜欢吃火锅", scope=scope, speaker_id="10001")])
    actor = "操" * ACTOR_MAX_CHARS
    report = await erasure.delete_all(engine, ErasureTarget.chat(bot, scope), Operator(actor))
    assert report.counts["memories"] == 1
    async with engine.unit_of_work() as uow:
        assert [entry.actor for entry in await audit.entries(uow.session, bot, 5)] == [actor]
