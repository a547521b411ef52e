"""Boots NoneBot, Amrita's chat flow, the fake model and this plugin on real storage, once per
process, before this folder's test modules are imported (``tests/booting.py``)."""

from __future__ import annotations

import pytest
from booting import _settle_engines, backend, boot, chroma_port, fake_openai, shut_down, tmp_root

__all__ = ["_settle_engines", "backend", "chroma_port", "fake_openai", "tmp_root"]


def pytest_configure(config: pytest.Config) -> None:
    boot(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    shut_down()
