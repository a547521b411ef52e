"""The configuration where Amrita keeps it: registered with nonebot-plugin-uniconf in the bot's
``config/`` folder, shown and saved by the WebUI, reloaded on change without a restart (keys
that need one keep their value and are named in the log), the old ``cognition.toml`` moved once.

The reload tests go through the real uniconf manager and its file watcher, as the running bot
does: they change the file (or save like the WebUI) and wait for the running engine to follow."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from log_capture import CognitionLog, capturing
from pydantic import BaseModel

from amrita_plugin_cognition import runtime
from amrita_plugin_cognition.config import tomllib
from amrita_plugin_cognition.config_form import RESTART_NOTE, settings_document
from amrita_plugin_cognition.config_location import (
    CONFIG_FILE_NAME,
    LEGACY_FILE_NAME,
    PLUGIN_NAME,
    config_path,
    migrate_legacy_file,
)
from amrita_plugin_cognition.config_restart import needs_restart
from amrita_plugin_cognition.engine.service import CognitionEngine

#: The bot layer (and with it the uniconf binding) is loaded on the embedded backend only.
pytestmark = pytest.mark.embedded_only
WAIT_SECONDS = 30.0


class _Records(CognitionLog):
    def lines(self, text: str, level: int | None = None) -> list[str]:
        return [
            record.getMessage()
            for record in self.records
            if text in record.getMessage() and (level is None or record.levelno == level)
        ]


@pytest.fixture
def cognition_log() -> Iterator[_Records]:
    with capturing(_Records()) as handler:
        yield handler


async def eventually(check: Callable[[], object], what: str) -> None:
    """Wait for the file watcher (it debounces changes for a moment) to make ``check`` true."""
    deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"not within {WAIT_SECONDS} s: {what}")
        await asyncio.sleep(0.05)


def _manager() -> Any:
    from nonebot_plugin_uniconf import UniConfigManager

    return UniConfigManager()


def _shown() -> Any:
    """What the WebUI shows: the instance uniconf holds for the plugin."""
    return _manager().get_config_instance(PLUGIN_NAME)


@pytest.fixture
async def running() -> AsyncIterator[tuple[CognitionEngine, Path]]:
    """The session's running engine and its configuration file; the file (and its mtime), the
    engine's configuration and what uniconf shows come back afterwards."""
    engine = await runtime.get_engine()
    path = runtime.config_file()
    text, stat = path.read_text(encoding="utf-8"), path.stat()
    config, shown, state = engine.config, _shown(), dict(runtime._config_state)
    try:
        yield engine, path
    finally:
        path.write_text(text, encoding="utf-8")
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        runtime._config_state.update(state)  # the restored file is no change to apply
        engine.config = config
        if shown is not None:
            await _manager().loads_config(shown, PLUGIN_NAME)


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Change the file as an editor would (the whole text rewritten)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(tomli_w.dumps(data), encoding="utf-8")


def _leaf_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    keys = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys.extend(_leaf_keys(annotation, f"{prefix}{name}."))
        else:
            keys.append(f"{prefix}{name}")
    return keys


def _field(model: type[BaseModel], key: str) -> Any:
    *sections, name = key.split(".")
    for section in sections:
        model = model.model_fields[section].annotation  # type: ignore[assignment]
    return model.model_fields[name]


# ---------------------------------------------------------------------------- registration


async def test_the_bot_registers_its_configuration_with_uniconf_in_the_config_folder(tmp_root: Path) -> None:
    manager = _manager()
    assert manager.has_config_class(PLUGIN_NAME)  # listed by the WebUI's configuration editor
    path = runtime.config_file()
    assert path == tmp_root / "config" / PLUGIN_NAME / CONFIG_FILE_NAME  # where uniconf keeps it
    shown = _shown()
    assert shown is not None and shown.outbox_interval_seconds == 3600  # the file's values (conftest)
    assert shown.historian.poll_interval_seconds == 3600
    # uniconf did not rewrite the file with every default when it registered it
    assert "memo_max_chars" not in path.read_text(encoding="utf-8")


def test_the_webui_shows_a_line_for_every_key_and_marks_the_keys_that_need_a_restart() -> None:
    document = _manager().get_config_class_by_name(PLUGIN_NAME)
    assert document is settings_document()
    for key in _leaf_keys(document):
        description = _field(document, key).description or ""
        assert description.replace(RESTART_NOTE, ""), f"{key} has no description in the WebUI"
        assert (RESTART_NOTE in description) == needs_restart(key), key
    assert "需要重启" in _field(document, "embedder.model").description
    assert "需要重启" in _field(document, "historian.poll_interval_seconds").description
    assert "需要重启" not in _field(document, "recall.top_k").description


# ---------------------------------------------------------------------------- reload


async def test_a_live_key_saved_in_the_webui_reaches_the_running_engine(
    running: tuple[CognitionEngine, Path], cognition_log: _Records
) -> None:
    engine, path = running
    assert engine.config.recall.top_k != 3
    manager = _manager()
    document = manager.get_config_class_by_name(PLUGIN_NAME)
    # what the WebUI's save does (amrita/plugins/webui/service/route/confedit.py)
    merged = _shown().model_dump()
    merged["recall"]["top_k"] = 3
    merged["llm"]["timeout_seconds"] = 42
    await manager.loads_config(document.model_validate(merged), PLUGIN_NAME)
    await manager.save_config(PLUGIN_NAME)
    assert tomllib.loads(path.read_text(encoding="utf-8"))["recall"]["top_k"] == 3
    await eventually(lambda: engine.config.recall.top_k == 3, "the saved top_k reaches the engine")
    assert engine.llm is not None and engine.llm.settings.timeout_seconds == 42  # the gateway follows
    assert engine.config.outbox_interval_seconds == 3600  # the rest as in the file
    assert cognition_log.lines("stage=config_reload applied=1 restart_needed=-", logging.INFO)


async def test_a_key_that_needs_a_restart_keeps_its_value_and_the_log_names_it(
    running: tuple[CognitionEngine, Path], cognition_log: _Records
) -> None:
    engine, path = running
    before = engine.config

    def change(data: dict[str, Any]) -> None:
        data["historian"]["poll_interval_seconds"] = 7
        data["embedder"] = {"timeout_seconds": 9.0}
        data["recall"] = {"top_k": 4}

    _edit(path, change)
    await eventually(lambda: engine.config.recall.top_k == 4, "the live key of the same edit applies")
    assert engine.config.historian.poll_interval_seconds == before.historian.poll_interval_seconds == 3600
    assert engine.config.embedder == before.embedder
    notices = cognition_log.lines("restart_needed=", logging.WARNING)
    assert len(notices) == 1, cognition_log.lines("stage=config_reload")
    assert "embedder.timeout_seconds" in notices[0] and "historian.poll_interval_seconds" in notices[0]
    assert "需要重启" in notices[0]
    # the WebUI shows the file (the new values, marked as needing a restart)
    await eventually(lambda: _shown().historian.poll_interval_seconds == 7, "the WebUI shows the file")


async def test_a_bad_edit_keeps_the_running_configuration_with_one_line_naming_the_key(
    running: tuple[CognitionEngine, Path], cognition_log: _Records
) -> None:
    engine, path = running
    before, shown = engine.config, _shown()
    path.write_text('scope_polcy = "open"\n[recall]\ntop_k = 2\n', encoding="utf-8")
    await eventually(lambda: cognition_log.lines("stage=config_reload applied=0"), "the refusal is logged")
    await asyncio.sleep(0.5)  # whoever else looks at the file now must not apply it either
    assert engine.config is before and engine.config.recall.top_k != 2
    assert _shown() is shown  # the WebUI keeps showing the running configuration
    refusals = cognition_log.lines("stage=config_reload applied=0")
    assert len(refusals) == 1
    assert "scope_polcy" in refusals[0] and "scope_policy" in refusals[0] and str(path) in refusals[0]
    assert "继续使用当前配置" in refusals[0]
    assert not [record for record in cognition_log.records if record.exc_info]  # a line, no traceback
    assert runtime.current_engine() is engine and await runtime.get_engine() is engine


async def test_environment_overrides_and_variable_references_apply_on_reload_but_never_reach_the_webui(
    running: tuple[CognitionEngine, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, path = running
    monkeypatch.setenv("COGNITION_RECALL__TOP_K", "9")
    monkeypatch.setenv("COGNITION_TEST_PRESET", "便宜模型")

    def change(data: dict[str, Any]) -> None:
        data["recall"] = {"top_k": 2}
        data["llm"] = {"preset": "${COGNITION_TEST_PRESET}"}

    _edit(path, change)
    await eventually(lambda: engine.config.llm.preset == "便宜模型", "the ${NAME} reference is expanded")
    assert engine.config.recall.top_k == 9  # the environment wins over the file
    # the WebUI shows and saves the file as written: the reference, not the value, and no override
    await eventually(lambda: _shown().llm.preset == "${COGNITION_TEST_PRESET}", "the WebUI shows the file")
    assert _shown().recall.top_k == 2


# ---------------------------------------------------------------------------- where the file is


def test_the_old_file_is_moved_once_with_one_line_and_its_content_kept(tmp_path: Path, cognition_log: _Records) -> None:
    legacy = tmp_path / LEGACY_FILE_NAME
    text = '# my settings\nscope_policy = "open"\n[recall]\ntop_k = 5\n'
    legacy.write_text(text, encoding="utf-8")
    target = migrate_legacy_file(tmp_path)
    assert target == tmp_path / CONFIG_FILE_NAME
    assert target.read_text(encoding="utf-8") == text  # byte for byte, comments included
    assert not legacy.exists()
    kept = tmp_path / f"{LEGACY_FILE_NAME}.migrated"
    assert kept.read_text(encoding="utf-8") == text  # the old file is kept, renamed
    lines = cognition_log.lines("stage=config_migrate")
    assert len(lines) == 1 and str(legacy) in lines[0] and str(target) in lines[0]
    assert migrate_legacy_file(tmp_path) is None  # once
    assert len(cognition_log.lines("stage=config_migrate")) == 1

    # an old file that turns up again never overwrites the configuration, nor an earlier copy
    legacy.write_text("scope_policy = 1\n", encoding="utf-8")
    assert migrate_legacy_file(tmp_path) is None
    assert target.read_text(encoding="utf-8") == text and legacy.read_text(encoding="utf-8") == "scope_policy = 1\n"
    warning = cognition_log.lines("migrated=0", logging.WARNING)
    assert len(warning) == 1 and str(legacy) in warning[0] and str(target) in warning[0]
    target.unlink()
    assert migrate_legacy_file(tmp_path) == target
    assert kept.read_text(encoding="utf-8") == text
    assert (tmp_path / f"{LEGACY_FILE_NAME}.migrated-2").read_text(encoding="utf-8") == "scope_policy = 1\n"


def test_readers_without_the_bot_use_the_new_file_else_the_old_one_and_cognition_config_wins(
    tmp_path: Path,
) -> None:
    current, legacy = tmp_path / CONFIG_FILE_NAME, tmp_path / LEGACY_FILE_NAME
    assert config_path({}, tmp_path) == current  # nothing yet: where uniconf will put it
    legacy.write_text("enable = true\n", encoding="utf-8")
    assert config_path({}, tmp_path) == legacy  # not migrated yet: read where it is
    current.write_text("enable = true\n", encoding="utf-8")
    assert config_path({}, tmp_path) == current
    elsewhere = tmp_path / "elsewhere.toml"
    assert config_path({"COGNITION_CONFIG": str(elsewhere)}, tmp_path) == elsewhere
