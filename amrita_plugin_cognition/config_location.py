"""Where the configuration file is, and the one-time move from where it used to be.

In a bot the file is ``config.toml`` in the plugin's folder under the bot's ``config/`` folder
(``<localstore config dir>/amrita_plugin_cognition/config.toml``): the place
nonebot-plugin-uniconf gives every Amrita plugin, shown and saved by Amrita's WebUI. Before,
it was ``cognition.toml`` in the same folder. ``COGNITION_CONFIG`` names another file and wins.

Readers that run without the bot (the CLI, ``python -m amrita_plugin_cognition``) use
``config_path``: the uniconf file when it exists, else the old one. The bot moves the old file
once, at startup, before uniconf would create a file of defaults (``migrate_legacy_file``).

Light on purpose: the CLI imports this before it knows whether it needs NoneBot.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

from .config import CONFIG_ENV

PLUGIN_NAME = "amrita_plugin_cognition"
#: The name nonebot-plugin-uniconf gives a plugin's configuration file.
CONFIG_FILE_NAME = "config.toml"
#: Where the configuration was before it moved to uniconf (same folder).
LEGACY_FILE_NAME = "cognition.toml"
#: What the old file is renamed to once its content is in ``config.toml``.
MIGRATED_SUFFIX = ".migrated"

logger = logging.getLogger("cognition")


def config_folder() -> Path:
    """The plugin's folder under the bot's configuration folder (nonebot-plugin-localstore)."""
    from nonebot_plugin_localstore import get_config_dir

    return get_config_dir(PLUGIN_NAME)


def config_path(environ: Mapping[str, str] | None = None, folder: Path | None = None) -> Path:
    """The file the configuration is read from: ``COGNITION_CONFIG`` when set; else
    ``config.toml`` in ``folder`` (the plugin's configuration folder), unless only the old
    ``cognition.toml`` is there (not migrated yet: read where it is)."""
    environ = os.environ if environ is None else environ
    if environ.get(CONFIG_ENV):
        return Path(environ[CONFIG_ENV])
    folder = config_folder() if folder is None else folder
    current = folder / CONFIG_FILE_NAME
    legacy = folder / LEGACY_FILE_NAME
    if not current.exists() and legacy.is_file():
        return legacy
    return current


def migrate_legacy_file(folder: Path) -> Path | None:
    """Move the old ``cognition.toml`` of ``folder`` to ``config.toml``, once.

    The text is copied byte for byte (comments included) into a ``config.toml`` that does not
    exist yet, then the old file is renamed ``cognition.toml.migrated`` (kept, never deleted).
    An existing ``config.toml`` is never overwritten: the old file then stays where it is, unread,
    and a warning says so. Returns the new file when a migration happened. Raises ``OSError``
    when the copy cannot be made (the old file is untouched then).
    """
    legacy = folder / LEGACY_FILE_NAME
    target = folder / CONFIG_FILE_NAME
    if not legacy.is_file():
        return None
    if target.exists():
        logger.warning(
            "[cognition] stage=config_migrate migrated=0 reason=target_exists legacy=%s config=%s "
            "旧配置文件 %s 不再被读取（已有 %s）：请把其中的设置搬过去后删除它",
            legacy,
            target,
            legacy.name,
            target.name,
        )
        return None
    content = legacy.read_bytes()
    try:
        with open(target, "xb") as copy:  # "x": fails instead of overwriting a file made meanwhile
            copy.write(content)
            copy.flush()
            os.fsync(copy.fileno())
    except FileExistsError:
        return None
    except OSError:
        target.unlink(missing_ok=True)  # a partial copy must not shadow the old file
        raise
    kept = _free_name(legacy.with_name(legacy.name + MIGRATED_SUFFIX))
    try:
        legacy.rename(kept)
    except OSError as error:  # copied all the same: the next start warns that the old file is unread
        logger.warning("[cognition] stage=config_migrate rename_failed=%s legacy=%s", error, legacy)
        kept = legacy
    logger.info(
        "[cognition] stage=config_migrate migrated=1 from=%s to=%s old_file_kept_as=%s "
        "配置文件已从 %s 迁移到 %s（旧文件改名保留）",
        legacy,
        target,
        kept.name,
        legacy.name,
        target.name,
    )
    return target


def write_default_file(folder: Path, text: str) -> Path | None:
    """Write ``config.toml`` into ``folder`` with ``text`` (the defaults, each key under its
    comment: ``config_form.default_file_text``) when there is none, before uniconf would write a
    file of bare defaults. Never overwrites, never leaves half a file: the text goes to a
    temporary file first and is linked into place only if the name is still free. Returns the
    file when it wrote one."""
    target = folder / CONFIG_FILE_NAME
    if target.exists():
        return None
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{CONFIG_FILE_NAME}.{os.getpid()}.partial"
    try:
        partial.write_text(text, encoding="utf-8")
        try:
            os.link(partial, target)
        except FileExistsError:  # written meanwhile (an editor, another process): theirs stays
            return None
    finally:
        partial.unlink(missing_ok=True)
    logger.info("[cognition] stage=config_default written=1 config=%s 已写入带注释的默认配置文件", target)
    return target


def _free_name(path: Path) -> Path:
    """``path``, or ``path-2``, ``path-3`` … whichever does not exist (an earlier copy is kept)."""
    candidate, number = path, 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}-{number}")
    return candidate
