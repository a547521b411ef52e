"""The configuration where Amrita keeps every plugin's: nonebot-plugin-uniconf.

At bot startup, before the engine reads its configuration (``bind_settings``):

1. an old ``cognition.toml`` is moved to ``config.toml`` once (``config_location``); with no
   file at all, ``config.toml`` is written with every default under a comment line per key
   (``config_form.default_file_text``: what it does, its range and unit);
2. the configuration class is registered with uniconf under the plugin's name, so that
   ``config/amrita_plugin_cognition/config.toml`` is created with the defaults when missing
   and Amrita's WebUI lists, shows and saves it (``config_form`` gives each key its line);
3. the plugin's configuration folder is watched (through uniconf): a change, from an editor or
   a save in the WebUI, reaches the running engine (``runtime.reload_config``: checked, keys
   that need a restart kept and named in the log, a bad file refused with one line) and what the
   WebUI shows follows the file while the file is valid.

uniconf's own reading of the file is not used: it would rewrite the file at every start and
answer a bad edit with a traceback instead of the key. What uniconf holds is the file as written
(``${NAME}`` unexpanded, without ``COGNITION_*`` overrides): the WebUI never shows or saves a
secret from the environment. With ``COGNITION_CONFIG`` set, that file is the configuration and
the WebUI does not edit it.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from nonebot import require
from pydantic import ValidationError

require("nonebot_plugin_uniconf")
from nonebot_plugin_uniconf import UniConfigManager  # noqa: E402

from .. import runtime  # noqa: E402
from ..config import CONFIG_ENV, CognitionConfig, load_config  # noqa: E402
from ..config_form import default_file_text, settings_document  # noqa: E402
from ..config_location import (  # noqa: E402
    CONFIG_FILE_NAME,
    PLUGIN_NAME,
    config_folder,
    migrate_legacy_file,
    write_default_file,
)
from ..errors import ConfigurationError  # noqa: E402

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, as a package before Python 3.11
    import tomli as tomllib

logger = logging.getLogger("cognition")


async def bind_settings() -> bool:
    """Migrate the old file, register with uniconf and watch the file. Never raises: the bot
    starts without the WebUI binding when it fails (logged). True when bound (or already)."""
    if os.environ.get(CONFIG_ENV):
        logger.info(
            "[cognition] stage=config_bind bound=0 reason=%s_set config=%s（WebUI 不编辑这个文件）",
            CONFIG_ENV,
            os.environ[CONFIG_ENV],
        )
        return False
    manager = UniConfigManager()
    if manager.has_config_class(PLUGIN_NAME):
        return True
    try:
        folder = config_folder()
        migrate_legacy_file(folder)
    except OSError as error:  # uniconf would create a file of defaults beside the old one: not now
        logger.error("[cognition] stage=config_migrate migrated=0 error=%s 配置文件迁移失败，继续读取旧文件", error)
        return False
    try:  # with a comment line per key; uniconf's own file of defaults would have none
        write_default_file(folder, default_file_text())
    except OSError as error:  # uniconf writes its bare defaults instead
        logger.warning("[cognition] stage=config_default written=0 error=%s", error)
    try:
        await manager.add_config(settings_document(), init_now=False, watch=False, owner_name=PLUGIN_NAME)
        await show_file(folder / CONFIG_FILE_NAME)
        await manager.add_directory(".", _file_changed, _is_config_file, owner_name=PLUGIN_NAME)
    except Exception as error:  # the bot and memory go on; only the WebUI binding is missing
        logger.error("[cognition] stage=config_bind bound=0 error=%s: %s", type(error).__name__, error, exc_info=error)
        return False
    logger.info("[cognition] stage=config_bind bound=1 config=%s", folder / CONFIG_FILE_NAME)
    return True


def _is_config_file(change: tuple[object, str]) -> bool:
    return Path(change[1]).name == CONFIG_FILE_NAME


async def _file_changed(_owner: str, folder: Path) -> None:
    """uniconf's watcher saw ``config.toml`` change (an editor, or a save in the WebUI)."""
    runtime.reload_config()
    await show_file(folder / CONFIG_FILE_NAME)


async def show_file(path: Path) -> None:
    """Hand the file as written to uniconf (what the WebUI shows), when the plugin can use it;
    otherwise the WebUI keeps showing what it showed (the error is logged by the reload)."""
    document = read_document(path)
    if document is not None:
        await UniConfigManager().loads_config(document, PLUGIN_NAME)


def read_document(path: Path) -> CognitionConfig | None:
    """The file as written, as the WebUI's class; None when it cannot be used."""
    try:
        load_config(path)  # usable as a whole: environment overrides and ${NAME} included
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return settings_document().model_validate(data)
    except (ConfigurationError, OSError):  # the reload or the engine start logs why
        return None
    except ValidationError as error:  # usable once expanded, e.g. port = "${CHROMA_PORT}"
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        logger.warning(
            "[cognition] stage=config_bind webui=0 key=%s reason=%s "
            "WebUI 无法显示此文件：配置项 %s 的值要展开 ${NAME} 或经 COGNITION_* 覆盖后才有效",
            where,
            first["msg"],
            where,
        )
        return None
