"""A bot with Amrita's WebUI on, serving a standalone home's memory bank on 127.0.0.1 (the memory
page's end-to-end test and ``bench/webui_page.py``): ``python bench/_webui_server.py HOME PORT PASSWORD``.

NoneBot with the FastAPI driver, OneBot V11, Amrita's chat plugin (which loads the WebUI) and this
plugin, as a bot project loads them, on the home's SQLite database and folders; the WebUI's user is
``admin`` with PASSWORD. The seeded bank's vectors came from a flat benchmark embedder: the
fingerprint check is told to keep them (``on_mismatch = "never"``); the page reads only SQL."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    home, port, password = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    config = home / "config" / "amrita_plugin_cognition"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        'outbox_interval_seconds = 3600\n[embedder]\non_mismatch = "never"\n', encoding="utf-8"
    )
    import nonebot
    from nonebot.adapters.onebot.v11 import Adapter

    nonebot.init(
        driver="~fastapi",
        host="127.0.0.1",
        port=port,
        sqlalchemy_database_url=f"sqlite+aiosqlite:///{home / 'cognition.sqlite3'}",
        localstore_data_dir=str(home / "data"),
        localstore_config_dir=str(home / "config"),
        localstore_cache_dir=str(home / "cache"),
        alembic_startup_check=False,
        webui_enable=True,
        webui_user_name="admin",
        webui_password=password,
        log_level=os.environ.get("WEBUI_SERVER_LOG_LEVEL", "WARNING"),
    )
    nonebot.get_driver().register_adapter(Adapter)
    nonebot.require("amrita.plugins.chat")
    nonebot.load_plugin("amrita_plugin_cognition")
    from nonebot_plugin_orm.__main__ import main as orm_main

    orm_main(["upgrade"], prog_name="orm", standalone_mode=False)
    print("serving", flush=True)
    nonebot.run()


if __name__ == "__main__":
    main()
