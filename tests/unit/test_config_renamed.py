"""Renamed configuration keys (issue 21, one queue vocabulary): a bot owner's file or environment
with the old names keeps working. The value moves to the new key (``job_max_retries`` counted
the attempts after the first, ``job_max_attempts`` counts all of them: old + 1), one warning names
old → new in Chinese and English, the new name wins when both are given, unknown keys are still
refused, and the WebUI's class shows only the new names."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli
from log_capture import CognitionLog, capturing

from amrita_plugin_cognition import config_renames
from amrita_plugin_cognition.config import RENAMED_KEYS, CognitionConfig, load_config
from amrita_plugin_cognition.config_form import DESCRIPTIONS, UNITS, default_file_text, settings_document
from amrita_plugin_cognition.errors import ConfigurationError

#: (file text with the old name, the new dotted key, the value it must hold)
OLD_FILES = [
    ("[embedder]\ntimeout = 9.5\n", "embedder.timeout_seconds", 9.5),
    ("[historian]\nstale_job_timeout_seconds = 120\n", "historian.job_lease_seconds", 120),
    ("[historian]\njob_max_retries = 0\n", "historian.job_max_attempts", 1),
    ("[historian]\njob_max_retries = 5\n", "historian.job_max_attempts", 6),
    ("[historian]\nfailed_jobs_keep = 7\n", "historian.dead_jobs_keep", 7),
    ("[historian]\nfailed_jobs_keep_days = 2.5\n", "historian.dead_jobs_keep_days", 2.5),
    ("[historian]\nsource_message_max_len = 321\n", "historian.source_message_max_chars", 321),
    ("[profiles]\nrevision_keep = 2\n", "profiles.revisions_keep", 2),
]


class _Warnings(CognitionLog):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def renamed(self) -> list[str]:
        return [message for record in self.records if "stage=config_renamed" in (message := record.getMessage())]


@pytest.fixture
def warnings(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Warnings]:
    monkeypatch.setattr(config_renames, "_warned_renamed", set())
    with capturing(_Warnings()) as handler:
        yield handler


def _value(config: CognitionConfig, dotted: str) -> Any:
    value: Any = config
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_renamed_key_is_tested_and_its_new_name_exists() -> None:
    assert {renamed.new for renamed in RENAMED_KEYS} == {new for _, new, _ in OLD_FILES}
    defaults = CognitionConfig()
    for renamed in RENAMED_KEYS:
        _value(defaults, renamed.new)  # a real key
        *sections, old = renamed.old.split(".")
        model: Any = CognitionConfig
        for section in sections:
            model = model.model_fields[section].annotation
        assert old not in model.model_fields, f"{renamed.old} is still a key"


@pytest.mark.parametrize(("text", "new", "expected"), OLD_FILES, ids=[case[1] for case in OLD_FILES])
def test_an_old_name_in_the_file_loads_with_one_warning_and_its_value(
    tmp_path: Path, warnings: _Warnings, text: str, new: str, expected: Any
) -> None:
    path = _file(tmp_path, text)
    config = load_config(path, environ={})
    assert _value(config, new) == expected
    renamed = warnings.renamed()
    assert len(renamed) == 1, [record.getMessage() for record in warnings.records]
    old = next(item.old for item in RENAMED_KEYS if item.new == new)
    message = renamed[0]
    assert f"old={old} new={new}" in message
    assert f"配置项 {old} 已改名为 {new}" in message and f"config key {old} is now {new}" in message
    assert str(path) in message  # names the file
    assert _value(load_config(path, environ={}), new) == expected  # read again (a reload, the WebUI): said once
    assert len(warnings.renamed()) == 1


def test_the_retries_to_attempts_conversion_is_said_in_the_warning(tmp_path: Path, warnings: _Warnings) -> None:
    load_config(_file(tmp_path, "[historian]\njob_max_retries = 3\n"), environ={})
    assert "(3 → 4)" in warnings.renamed()[0]


def test_when_both_names_are_given_the_new_one_wins_and_the_warning_says_so(
    tmp_path: Path, warnings: _Warnings
) -> None:
    text = "[historian]\nstale_job_timeout_seconds = 120\njob_lease_seconds = 300\n[embedder]\ntimeout = 1.0\n"
    config = load_config(_file(tmp_path, text), environ={})
    assert config.historian.job_lease_seconds == 300
    assert config.embedder.timeout_seconds == 1.0
    both = [message for message in warnings.renamed() if "both=1" in message]
    assert len(both) == 1 and "historian.job_lease_seconds wins" in both[0] and "被忽略" in both[0]
    assert len(warnings.renamed()) == 2


def test_an_old_name_in_the_environment_works_and_the_new_variable_wins(warnings: _Warnings) -> None:
    config = load_config(None, environ={"COGNITION_HISTORIAN__JOB_MAX_RETRIES": "1"})
    assert config.historian.job_max_attempts == 2
    assert "COGNITION_HISTORIAN__JOB_MAX_RETRIES" in warnings.renamed()[0]
    config = load_config(
        None,
        environ={"COGNITION_EMBEDDER__TIMEOUT": "3", "COGNITION_EMBEDDER__TIMEOUT_SECONDS": "4"},
    )
    assert config.embedder.timeout_seconds == 4.0
    assert "both=1" in warnings.renamed()[-1]


def test_an_old_name_with_a_bad_value_is_refused_under_the_new_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as refused:
        load_config(_file(tmp_path, '[historian]\nstale_job_timeout_seconds = "ten"\n'), environ={})
    assert "historian.job_lease_seconds" in refused.value.zh


def test_unknown_keys_are_still_refused_with_the_nearest_key(tmp_path: Path) -> None:
    nearest = r"historian\.job_lease_second \(did you mean historian\.job_lease_seconds\?"
    with pytest.raises(ConfigurationError, match=nearest):
        load_config(_file(tmp_path, "[historian]\njob_lease_second = 1\n"), environ={})
    # a misspelt old name points to the new one
    with pytest.raises(ConfigurationError, match=r"did you mean historian\.job_lease_seconds\?"):
        load_config(_file(tmp_path, "[historian]\nstale_job_timeout_second = 1\n"), environ={})
    with pytest.raises(ConfigurationError, match="unknown config key"):
        load_config(None, environ={"COGNITION_HISTORIAN__JOB_MAX_RETRIEZ": "1"})


def test_the_old_name_in_a_section_of_another_name_is_unknown(tmp_path: Path) -> None:
    """Only the documented path moves: ``timeout`` at the top level is no old key."""
    with pytest.raises(ConfigurationError, match="unknown config key timeout"):
        load_config(_file(tmp_path, "timeout = 3\n"), environ={})


def test_the_webui_shows_only_the_new_names(tmp_path: Path) -> None:
    document = settings_document()
    read = document.model_validate(tomli.loads("[historian]\njob_max_retries = 2\n[profiles]\nrevision_keep = 1\n"))
    dumped = read.model_dump()
    assert dumped["historian"]["job_max_attempts"] == 3 and "job_max_retries" not in dumped["historian"]
    assert dumped["profiles"]["revisions_keep"] == 1 and "revision_keep" not in dumped["profiles"]
    text = default_file_text()
    for renamed in RENAMED_KEYS:
        assert renamed.old not in DESCRIPTIONS and renamed.old not in UNITS
        assert renamed.new in DESCRIPTIONS
        old_leaf = renamed.old.rsplit(".", 1)[-1]
        assert f"\n{old_leaf} = " not in text, renamed.old
