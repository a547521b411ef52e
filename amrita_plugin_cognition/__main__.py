"""``python -m amrita_plugin_cognition …``: the CLI outside a bot, on a standalone folder.

Nothing is initialised here: the command line is parsed first (``--help`` and usage errors
answer at once), and a command loads what it needs (``cli/boot.py``). The commands that act on
memory initialise NoneBot without a driver on ``--home`` (default ``$COGNITION_HOME`` or
``./cognition-home``; SQLite, embedded Chroma and the local embedder under that folder) and load
this package again as a NoneBot plugin, so that nonebot-plugin-orm finds its models and
migrations. ``eval recall`` uses a throw-away folder; the other evaluations load nothing.

``demo`` needs the whole bot instead: NoneBot with the FastAPI driver and the OneBot V11
adapter, the Amrita chat plugin and this plugin with its chat adapter, in a throw-away folder
that is also the working directory (no ``.env`` of a bot project applies), on the embedded
defaults (the plugin's ``COGNITION_*`` settings are ignored).
"""

import os
import sys
from pathlib import Path


def _launch() -> None:
    # Marks the standalone mode (cli/runtime.standalone_home); ``--home`` replaces the default.
    os.environ["COGNITION_STANDALONE_HOME"] = str(Path(os.environ.get("COGNITION_HOME", "cognition-home")).resolve())
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    from amrita_plugin_cognition.cli.commands import main

    try:
        main(sys.argv[1:])
    except SystemExit as finished:
        _leave(finished.code)
    _leave(0)


def _leave(code: object) -> None:
    """End the process once the command is done, without the interpreter's shutdown.

    Everything the command wrote is committed by then, and its output is flushed here. What the
    shutdown would add is joining every non-daemon thread and dropping native runtimes (embedded
    Chroma's Rust runtime waits for its own threads): the demo hung in CI after printing its
    last line, with all its work done."""
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


_launch()
