"""Boots NoneBot, Amrita's chat flow, the fake model and this plugin on real storage, once per
process, before this folder's test modules are imported (``tests/booting.py``)."""

from booting import pytest_configure, pytest_unconfigure

__all__ = ["pytest_configure", "pytest_unconfigure"]
