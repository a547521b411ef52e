"""Readers of other memory plugins' data, turned into ``api.ImportItem``s that
``engine.imports.run`` writes through the normal write paths.

Each reader only reads (a foreign Chroma folder is opened from a temporary copy, a foreign SQLite
database read-only) and reads everything before anything is written, so a source it cannot read
changes nothing. Like ``cli`` and ``bot``, this package imports only the public module ``api``.
"""

from __future__ import annotations

from .source import ImportSourceError, SourceRead

__all__ = ["ImportSourceError", "SourceRead"]
