"""amrita_plugin_cognition: long-term memory for AmritaBot.

This module only declares the plugin and wires it at load time; the work lives in ``engine``.
Set ``COGNITION_ENGINE_ONLY=1`` to load the storage layer without the Amrita chat adapter (the
standalone CLI and the evaluation harness do this). Imported before NoneBot is initialised
(``python -m amrita_plugin_cognition``), it declares nothing: ``__main__`` then initialises
NoneBot and loads the package again as a plugin.
"""

import os

import nonebot


def _nonebot_ready() -> bool:
    try:
        nonebot.get_driver()
    except ValueError:
        return False
    return True


if _nonebot_ready():
    from nonebot import require
    from nonebot.plugin import PluginMetadata

    require("nonebot_plugin_orm")
    require("nonebot_plugin_localstore")

    from .store import models as _models  # noqa: F401  (registers the ORM models)
    from .store import orm_hooks

    orm_hooks.install()

    # Amrita's /menu shows ``name`` as the section of this plugin and lists its commands from the
    # matchers' menu state (bot/commands.py); ``usage`` is what NoneBot's own help tools show.
    __plugin_meta__ = PluginMetadata(
        name="Cognition 长期记忆",
        description="为 AmritaBot 提供长期记忆：绝对化事实、混合召回、置顶备忘、提醒事项与记忆治理",
        usage=(
            "/memory — 显示用法（装了 amrita-plugin-memory 时用 /cogmem）\n"
            "/memory user list [页码] | search <关键词> | delete <编号> — 我的记忆（列表、搜索仅私聊）\n"
            "/memory group list [页码] | search <关键词> | delete <编号> — 本群记忆\n"
            "/memory memo — 本会话置顶备忘录\n"
            "/profile — 我的画像；/profile group — 本群的画像（别名 /cogprofile）\n"
            "删除他人的群记忆、整体替换群备忘录需群管理员/群主、SUPERUSERS 或 LitePerm 节点 lp.admin / cognition.admin"
        ),
        type="application",
        homepage="https://pypi.org/project/amrita-plugin-cognition/",
        supported_adapters={"~onebot.v11"},
    )

    if os.environ.get("COGNITION_ENGINE_ONLY", "").lower() not in ("1", "true", "yes"):
        require("nonebot_plugin_apscheduler")
        require("amrita.plugins.chat")
        from . import bot as _bot  # noqa: F401
