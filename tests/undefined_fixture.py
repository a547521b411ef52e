"""Make an Undefined (github.com/69gg/Undefined) data folder for the importer's tests.

Undefined is a bot application, not a library on PyPI, so its files are written here following
its code at commit 9591dc24 (v3.12.0); each field says where it comes from. Its Chroma folder is
written with our own chromadb (the release Undefined pins is the same major version).

    python tests/undefined_fixture.py OUT_FOLDER     # or make(OUT_FOLDER) from a test

OUT_FOLDER gets ``data/cognitive/`` (what ``--from`` names) and ``data/end_summaries.json`` and
``data/memory.json`` beside it, as an Undefined bot's working directory holds them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

GROUP, USER, OTHER = "30001", "40001", "40002"
#: (event id, document, metadata) of the events. Collection "cognitive_events", created with
#: metadata {"hnsw:space": "cosine"} (src/Undefined/cognitive/vector_store.py, ``__init__``).
#: Ids are "{job_id}_{index}" when a job had several observations, else the job id, and the job id
#: is "{request_id}_{end_seq}_{milliseconds}" (cognitive/historian/worker.py ``_process_job``;
#: cognitive/job_queue.py ``enqueue``). The document is the historian's rewritten fact. Metadata
#: is the job's ``base_metadata`` plus ``has_observations`` (worker.py ``_process_job``) with empty
#: values dropped (vector_store.py ``_sanitize_metadata``); ``is_absolute`` is what releases
#: before v3 wrote (docs/cognitive-memory.md, "事件记忆" table) and is kept where present.
EVENTS = [
    (
        "req1_0_1764900000000",
        "2026年12月1日，群30001约定每周六下午三点在线下桌游店聚会。",
        {
            "request_type": "group",
            "group_id": GROUP,
            "user_id": USER,
            "sender_id": USER,
            "timestamp_utc": "2026-12-01T07:00:00+00:00",
            "timestamp_local": "2026-12-01T15:00:00+08:00",
            "timestamp_epoch": 1764572400,
            "timezone": "Asia/Shanghai",
            "location_abs": "桌游群",
            "perspective": "group",
            "schema_version": "final_v1",
            "end_seq": 0,
            "request_id": "req1",
            "message_ids": ["1001"],
            "has_observations": True,
            "is_absolute": True,
        },
    ),
    (
        "req2_0_1764900100000",
        "QQ号40001（昵称阿杰）在私聊中说他下个月要去杭州出差。",
        {
            "request_type": "private",
            "user_id": USER,
            "sender_id": USER,
            "timestamp_utc": "2026-12-02T02:00:00+00:00",
            "timestamp_local": "2026-12-02T10:00:00+08:00",
            "timestamp_epoch": 1764640800,
            "timezone": "Asia/Shanghai",
            "location_abs": "阿杰",
            "perspective": "sender",
            "schema_version": "final_v1",
            "end_seq": 0,
            "request_id": "req2",
            "message_ids": ["2001"],
            "has_observations": True,
            "is_absolute": False,
        },
    ),
    (
        "req3_0_1764900200000_1",
        "QQ号40002（昵称小雨）的银行卡密码是 pass-word-2026xyz。",
        {
            "request_type": "private",
            "user_id": OTHER,
            "sender_id": OTHER,
            "timestamp_utc": "2026-12-03T02:00:00+00:00",
            "timestamp_epoch": 1764727200,
            "perspective": "sender",
            "schema_version": "final_v1",
            "has_observations": True,
        },
    ),
]
#: Profiles: ``{profiles}/{entity_type}s/{entity_id}.md`` (cognitive/profile_storage.py
#: ``_profile_path``), written as YAML front matter (``yaml.dump(frontmatter, allow_unicode=True)``
#: of entity_type, entity_id, name, tags, updated_at, source_event_id, plus nickname/qq for a user
#: or group_name/group_id for a group: historian/worker.py ``_write_profile``) then evaluation,
#: body and roast separated by "---" lines (cognitive/service/helpers.py
#: ``_serialize_profile_markdown``). Before each write the old file is copied to
#: ``{profiles}/history/{entity_type}/{entity_id}/{%Y%m%d%H%M%S%f}.md`` (profile_storage.py
#: ``write_profile``, ``_history_dir``: singular entity type).
PROFILES = {
    ("user", USER): {
        "name": "阿杰",
        "tags": ["桌游", "出差"],
        "history": [("爱玩桌游的上班族。", "- 常组织周末桌游\n", "")],
        "current": ("爱玩桌游、经常出差的上班族。", "- 常组织周末桌游\n- 下个月去杭州出差\n", "行李箱比桌游盒还多。"),
    },
    ("group", GROUP): {
        "name": "桌游群",
        "tags": ["桌游"],
        "history": [],
        "current": ("线下桌游爱好者的群。", "- 每周六聚会\n", ""),
    },
}
#: end_summaries.json: a list of {"summary", "timestamp", "location": {"type", "name"}}
#: (src/Undefined/end_summary_storage.py ``make_record``; the location's name is the group's name
#: or the sender's nickname, else "群<id>" / the sender's id: skills/tools/end/handler.py
#: ``_build_location``), written with ``json.dump(records, ensure_ascii=False, indent=2)``.
END_SUMMARIES = [
    {
        "summary": "和桌游群讨论了周六聚会的时间",
        "timestamp": "2026-12-01T15:01:00+08:00",
        "location": {"type": "group", "name": "桌游群"},
    },
    {
        "summary": "帮阿杰查了去杭州的高铁",
        "timestamp": "2026-12-02T10:02:00+08:00",
        "location": {"type": "private", "name": "阿杰"},
    },
    {
        "summary": "在一个不认识的群里回答了问题",
        "timestamp": "2026-12-02T11:00:00+08:00",
        "location": {"type": "group", "name": "群99999"},
    },
    "一条旧格式的纯文本摘要",
]
#: memory.json: a list of {"uuid", "fact", "created_at": "%Y-%m-%d %H:%M:%S"} (src/Undefined/memory.py
#: ``Memory``, ``MemoryStorage.add``): the bot's own pinned reminders, global (no chat).
PINS = [
    {
        "uuid": "6f1d2c3b-0000-4000-8000-000000000001",
        "fact": "用户要求以后回复尽量简短",
        "created_at": "2026-12-01 09:00:00",
    }
]
#: A pending job: ``{queues}/pending/{job_id}.json`` holding the ``job`` dict of
#: cognitive/service/service.py ``enqueue_job`` (written by utils/io.py ``write_json``: indent 2).
PENDING_JOB = {
    "request_id": "req9",
    "end_seq": 0,
    "user_id": USER,
    "group_id": GROUP,
    "sender_id": USER,
    "sender_name": "阿杰",
    "group_name": "桌游群",
    "bot_name": "Undefined",
    "request_type": "group",
    "timestamp_utc": "2026-12-04T12:00:00+00:00",
    "timestamp_local": "2026-12-04T20:00:00+08:00",
    "timestamp_epoch": 1764849600,
    "timezone": "Asia/Shanghai",
    "location_abs": "桌游群",
    "message_ids": ["9001"],
    "memo": "记下阿杰的新爱好",
    "observations": ["QQ号40001（昵称阿杰）最近开始学吉他"],
    "has_observations": True,
    "perspective": "",
    "profile_targets": [],
    "schema_version": "final_v1",
    "source_message": "我最近开始学吉他了",
    "recent_messages": [],
    "force": False,
}
PENDING_JOB_ID = "req9_0_1764849600000"


def make(out: Path) -> Path:
    """Write the folder; returns ``out/data/cognitive``."""
    import chromadb
    from chromadb.config import Settings

    data = out / "data"
    cognitive = data / "cognitive"
    client = chromadb.PersistentClient(path=str(cognitive / "chromadb"), settings=Settings(anonymized_telemetry=False))
    events = client.get_or_create_collection("cognitive_events", metadata={"hnsw:space": "cosine"})
    client.get_or_create_collection("cognitive_profiles", metadata={"hnsw:space": "cosine"})
    events.upsert(
        ids=[event_id for event_id, _, _ in EVENTS],
        documents=[document for _, document, _ in EVENTS],
        metadatas=[metadata for _, _, metadata in EVENTS],  # type: ignore[misc]
        embeddings=[[float(index + 1), 0.5, 0.25, 0.125] for index in range(len(EVENTS))],
    )
    client._system.stop()  # type: ignore[attr-defined]
    for (entity_type, entity_id), profile in PROFILES.items():
        folder = cognitive / "profiles" / f"{entity_type}s"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{entity_id}.md").write_text(
            _document(entity_type, entity_id, profile, profile["current"]), encoding="utf-8"
        )
        for number, version in enumerate(profile["history"]):
            history = cognitive / "profiles" / "history" / entity_type / entity_id
            history.mkdir(parents=True, exist_ok=True)
            name = f"2026120{number + 1}100000000000.md"
            (history / name).write_text(_document(entity_type, entity_id, profile, version), encoding="utf-8")
    pending = cognitive / "queues" / "pending"
    pending.mkdir(parents=True, exist_ok=True)
    for state in ("processing", "failed"):
        (cognitive / "queues" / state).mkdir(parents=True, exist_ok=True)
    (pending / f"{PENDING_JOB_ID}.json").write_text(
        json.dumps(PENDING_JOB, ensure_ascii=False, indent=2), encoding="utf-8"
    )
    (data / "end_summaries.json").write_text(json.dumps(END_SUMMARIES, ensure_ascii=False, indent=2), encoding="utf-8")
    (data / "memory.json").write_text(json.dumps(PINS, ensure_ascii=False, indent=2), encoding="utf-8")
    return cognitive


def _document(entity_type: str, entity_id: str, profile: dict, version: tuple[str, str, str]) -> str:  # type: ignore[type-arg]
    import yaml

    frontmatter = {
        "entity_type": entity_type,
        "entity_id": entity_id,
        "name": profile["name"],
        "tags": profile["tags"],
        "updated_at": "2026-12-04T20:00:00+08:00",
        "source_event_id": "req1_0_1764900000000",
    }
    if entity_type == "user":
        frontmatter |= {"nickname": profile["name"], "qq": entity_id}
    else:
        frontmatter |= {"group_name": profile["name"], "group_id": entity_id}
    evaluation, body, roast = version
    text = yaml.dump(frontmatter, allow_unicode=True)
    if roast:
        return f"---\n{text}---\n{evaluation}\n---\n{body}---\n{roast}\n"
    return f"---\n{text}---\n{evaluation}\n---\n{body}"


if __name__ == "__main__":
    print(make(Path(sys.argv[1]).resolve()))
