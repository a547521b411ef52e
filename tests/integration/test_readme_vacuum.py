"""The README's PostgreSQL paragraph names every table a delete-all writes to: the old versions of
their rows stay in the data files until VACUUM, and the operator runs the ``VACUUM (FULL) …`` it
gives. The tables are not listed by hand here: every statement of real delete-alls (a user, a
chat, the bot account) and of the vector work they queue is watched on the way to the database.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from engine_helpers import empty_job_queue, make_engine, new_bot, register_preset
from fake_openai import FakeOpenAI
from sqlalchemy import event
from test_erasure_complete import G2, LLM, PRESET, Person, build_bank

from amrita_plugin_cognition.domain.erasure import ErasureTarget
from amrita_plugin_cognition.domain.permissions import Operator
from amrita_plugin_cognition.domain.records import Scope
from amrita_plugin_cognition.engine import erasure
from amrita_plugin_cognition.store import keyword, knowledge_index, profile_index, sqlite

README = Path(__file__).resolve().parents[2] / "README.md"
_WRITE = re.compile(r"^\s*(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM)\s+\"?(\w+)", re.IGNORECASE)
#: SQLite's keyword tables are PostgreSQL's under another name (``store/keyword.py``, ``store/profile_index.py``,
#: ``store/knowledge_index.py``).
SAME_TABLE = {
    keyword.FTS_TABLE: keyword.PG_TABLE,
    profile_index.FTS_TABLE: profile_index.PG_TABLE,
    knowledge_index.FTS_TABLE: knowledge_index.PG_TABLE,
}
#: Tables a delete-all writes that never held what it erases, as the README says beside the list:
#: the audit record it adds (kept by design), the per-bot change counter, the store's own facts
#: (vector generation, embedding fingerprint); and SQLite's scratch table of zeros (``store/sqlite.py``).
NOT_ERASED = {"cognition_audit", "cognition_change", "cognition_meta", sqlite._SCRATCH}


def vacuum_list() -> set[str]:
    text = README.read_text(encoding="utf-8")
    statement = re.search(r"`VACUUM \(FULL\) ([^`]+);`", text)
    assert statement is not None, "README: the PostgreSQL paragraph gives no VACUUM (FULL) statement"
    return {name.strip() for name in statement.group(1).split(",")}


async def test_the_readme_vacuum_statement_names_every_table_a_delete_all_writes_to(
    tmp_root, chroma_port, fake_openai: FakeOpenAI
) -> None:
    register_preset(PRESET, fake_openai.base_url)
    engine = await make_engine(tmp_root, chroma_port, llm=LLM, profiles={"merge": False})
    await empty_job_queue()
    bot, person = new_bot(), Person()
    await build_bank(engine, bot, person)
    written: set[str] = set()

    def watch(_connection: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        match = _WRITE.match(statement)
        if match:
            written.add(SAME_TABLE.get(match.group(1), match.group(1)))

    async with engine.session() as session:
        database = session.get_bind()
    event.listen(database, "before_cursor_execute", watch)
    try:
        await erasure.delete_all(engine, ErasureTarget.user(bot, person.qq), actor=Operator(person.qq))
        await erasure.delete_all(engine, ErasureTarget.chat(bot, Scope("group", G2)), actor=Operator())
        await erasure.delete_all(engine, ErasureTarget.bot(bot), actor=Operator())
        await engine.index.drain()  # the vector work they queued, and its outbox rows
    finally:
        event.remove(database, "before_cursor_execute", watch)
    await empty_job_queue()

    erased = {table for table in written if table.startswith("cognition_")} - NOT_ERASED
    assert {"cognition_memory", "cognition_barrier", "cognition_outbox"} <= erased  # the watch saw them
    assert erased - vacuum_list() == set(), "README: add these tables to the VACUUM (FULL) statement"
    readme = README.read_text(encoding="utf-8")
    unnamed = [table for table in sorted(NOT_ERASED - {sqlite._SCRATCH}) if f"`{table}`" not in readme]
    assert unnamed == [], "README: say beside the list that these hold nothing erased"
