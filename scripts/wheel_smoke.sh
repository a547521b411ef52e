#!/usr/bin/env bash
# Build the wheel, install it into a fresh virtual environment (away from the checkout), and
# boot the plugin from it: migrations and prompt templates must come from the installed wheel.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# A throw-away environment: each module's bytecode is written when a process first imports it
# (Python's default), instead of compiling all ~13,000 installed files at install time
# (UV_COMPILE_BYTECODE, which .ci/run sets for the project's own environment, and
# PYTHONDONTWRITEBYTECODE, which these machines set), as scripts/project_smoke.sh does (there
# about 50 s less per bot project; here a few seconds, the wheel's environment being smaller).
unset UV_COMPILE_BYTECODE PYTHONDONTWRITEBYTECODE
rm -rf "$repo/dist"
uv build --wheel --out-dir "$work/dist" "$repo" >/dev/null
wheel="$(ls "$work"/dist/*.whl)"
# List to a file first: `unzip | grep -q` dies of SIGPIPE (exit 141) under pipefail when grep
# stops reading early.
unzip -Z1 "$wheel" > "$work/listing"
grep -q "^amrita_plugin_cognition/migrations/.*_memory_bank_foundation.py$" "$work/listing"
grep -q "^amrita_plugin_cognition/prompt/memory_block.jinja$" "$work/listing"
# PYTHON_VERSION: "3.10", "3.13" … (an interpreter pyenv installed, else uv finds one) or a path.
# shellcheck source=scripts/resolve_python.sh
. "$repo/scripts/resolve_python.sh"
uv venv --quiet --python "$(resolve_python "${PYTHON_VERSION:-3.11}")" "$work/venv"
"$work/venv/bin/python" --version
VIRTUAL_ENV="$work/venv" uv pip install --quiet "$wheel" fastapi uvicorn
cd "$work"
export ANONYMIZED_TELEMETRY=False
# 1. the CLI harness from the wheel (migrates a fresh SQLite, writes, recalls)
"$work/venv/bin/python" -m amrita_plugin_cognition eval recall "$repo/tests/data/recall_small.jsonl" --json > report.json
"$work/venv/bin/python" - <<'PY'
import json
report = json.loads(open("report.json").read().strip().splitlines()[-1])
assert report["kind"] == "recall" and report["queries"] > 0, report
assert report["leaks"] == 0, report
print("wheel eval ok:", report["overall"])
PY
# 2. boot the full plugin (Amrita chat flow + this plugin) from the wheel with startup hooks
"$work/venv/bin/python" - "$work" <<'PY'
import asyncio, sys
from pathlib import Path
base = Path(sys.argv[1])
import nonebot
nonebot.init(driver="~fastapi", sqlalchemy_database_url=f"sqlite+aiosqlite:///{base / 'bot.sqlite3'}",
             localstore_data_dir=str(base / "data"), localstore_config_dir=str(base / "config"),
             localstore_cache_dir=str(base / "cache"), alembic_startup_check=False, webui_enable=False,
             log_level="WARNING")
from nonebot.adapters.onebot.v11 import Adapter
nonebot.get_driver().register_adapter(Adapter)
nonebot.require("amrita.plugins.chat")
plugin = nonebot.load_plugin("amrita_plugin_cognition")
assert plugin is not None, "plugin failed to load from the wheel"
import amrita_plugin_cognition
assert "site-packages" in amrita_plugin_cognition.__file__, amrita_plugin_cognition.__file__
from nonebot_plugin_orm.__main__ import main
main(["upgrade", "amrita_plugin_cognition@head"], prog_name="orm", standalone_mode=False)
async def boot():
    from amrita_plugin_cognition.runtime import get_engine
    from amrita_plugin_cognition.api import ChatContext, Scope
    engine = await get_engine()
    await engine.index.check_fingerprint()
    context = ChatContext("1", Scope("group", "1"), "2", "测试")
    await engine.memories.write(context, "group", "这是一条来自安装包的测试记忆。")
    await engine.index.drain()
    built = await engine.turns.context(context, ["安装包的测试记忆"])
    assert "<cognition_memory id=" in built.text and built.memories == 1, built
    print("wheel boot ok:", (await engine.index.status())["index"])
asyncio.run(boot())
PY
