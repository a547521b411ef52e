"""The CLI (``python -m amrita_plugin_cognition ARGS``) under cProfile, its stats written to FILE
before the command ends its process (it leaves with ``os._exit``, which ``python -m cProfile -o``
would never see). The main thread only: work handed to threads shows as the event loop's wait.

Usage: ``python bench/_profile_cli.py FILE ARGS…`` (``scale.py --cli-profile`` runs it).
"""

from __future__ import annotations

import cProfile
import os
import runpy
import sys

profile = cProfile.Profile()
stats_file = sys.argv[1]
sys.argv = ["amrita_plugin_cognition", *sys.argv[2:]]
_leave = os._exit


def _dump_then_leave(code: int) -> None:
    profile.disable()
    profile.dump_stats(stats_file)
    _leave(code)


os._exit = _dump_then_leave  # type: ignore[assignment]
profile.enable()
runpy.run_module("amrita_plugin_cognition", run_name="__main__", alter_sys=True)
