"""The plugin's migration graph as the read commands see it (``store/revision.py``): parsed from
the migration files, no alembic and no NoneBot; and what a recorded set of revisions means."""

from __future__ import annotations

import re
from pathlib import Path

from amrita_plugin_cognition.store.revision import MIGRATIONS, AppliedState, package_revisions


def test_every_migration_file_is_known_and_there_is_one_head() -> None:
    revisions = package_revisions()
    files = {path.name.split("_")[0] for path in Path(MIGRATIONS).glob("*.py") if path.name != "__init__.py"}
    assert revisions.known == files
    (head,) = revisions.heads
    named_as_parent = set()
    for path in Path(MIGRATIONS).glob("*.py"):
        named_as_parent.update(re.findall(r'^down_revision[^=]*=\s*"(\w+)"', path.read_text(encoding="utf-8"), re.M))
    assert head not in named_as_parent and revisions.known - named_as_parent == {head}


def test_what_the_recorded_revisions_mean() -> None:
    heads = frozenset({"f6b2d8a4c1e9"})
    current = AppliedState(frozenset({"f6b2d8a4c1e9"}), heads)
    assert current.current and not current.behind
    behind = AppliedState(frozenset({"e8a4c1f7d3b6"}), heads)  # an older revision of ours is recorded
    assert behind.behind and not behind.current
    # none of ours recorded (a database made by `orm sync`, or never migrated): not "behind", the
    # schema check decides; a standalone folder is migrated then (it is not current)
    unknown = AppliedState(frozenset(), heads)
    assert not unknown.behind and not unknown.current
