"""Synthetic but realistic Chinese memories and queries, and their vectors cached on disk.

Facts are built from templates (people x activities x places x dates x companions x
feelings), deterministic for a seed, all distinct. Their local-USE vectors are computed once
and cached under ``/tmp/cognition-bench-cache`` (``.npy`` + texts), so reruns and the other
scripts reuse them; the engine still writes every memory through its real path, with an
embedder that serves these cached vectors (the very same model's output) and computes
anything else (queries) with the real model.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import zlib
from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path

import numpy as np

CACHE_ROOT = Path("/tmp/cognition-bench-cache")
CORPUS_VERSION = "v1"

NAMES = [
    "小明",
    "小红",
    "阿杰",
    "王芳",
    "李雷",
    "韩梅梅",
    "张伟",
    "刘洋",
    "陈静",
    "杨帆",
    "赵磊",
    "黄丽",
    "周杰",
    "吴敏",
    "徐晨",
    "孙悦",
    "马超",
    "朱婷",
    "胡斌",
    "郭琳",
    "何欢",
    "高远",
    "林夕",
    "罗宇",
    "梁爽",
    "宋佳",
    "郑凯",
    "谢娜",
    "韩雪",
    "唐宁",
    "冯硕",
    "董洁",
    "萧然",
    "程诚",
    "曹颖",
    "袁野",
    "邓超",
    "许晴",
    "傅雷",
    "沈腾",
    "曾可",
    "彭于",
    "吕方",
    "苏蕾",
    "卢卡",
    "蒋欣",
    "蔡琴",
    "贾玲",
    "丁一",
    "魏来",
]
ACTIVITIES = [
    "吃了一顿火锅",
    "爬了山",
    "看了一场电影",
    "打了羽毛球",
    "逛了夜市",
    "参加了同学聚会",
    "学了做蛋糕",
    "跑了十公里",
    "去看了画展",
    "听了一场演唱会",
    "拍了很多照片",
    "买了一台新电脑",
    "钓了一下午鱼",
    "打了一晚上游戏",
    "练了两个小时钢琴",
    "去图书馆看书",
    "骑车环湖",
    "包了饺子",
    "参加了马拉松",
    "看了樱花",
    "学了游泳",
    "做了志愿者",
    "去宠物店领养了一只猫",
    "体验了陶艺",
    "吃了正宗的烤鸭",
    "面试了一家公司",
    "搬了新家",
    "看了一场篮球赛",
    "露营了一晚",
    "学了吉他",
    "考了驾照科目二",
    "去医院体检",
    "喝了手冲咖啡",
    "吃了小龙虾",
    "参观了博物馆",
    "玩了剧本杀",
]
PLACES = [
    "北京",
    "上海",
    "杭州西湖",
    "成都",
    "重庆",
    "西安",
    "南京",
    "苏州",
    "厦门",
    "青岛",
    "广州",
    "深圳",
    "武汉",
    "长沙",
    "昆明",
    "大理",
    "丽江",
    "三亚",
    "哈尔滨",
    "天津",
    "公司楼下",
    "学校附近",
    "老家",
    "朋友家",
    "市中心",
    "海边",
    "郊区农家乐",
    "商场",
    "体育馆",
    "公园",
]
COMPANIONS = ["和同事", "和家人", "和女朋友", "和男朋友", "一个人", "和室友", "和大学同学", "和表哥", "和邻居"]
FEELINGS = [
    "觉得很开心",
    "说以后还想再去",
    "感觉有点累",
    "觉得性价比很高",
    "说体验一般",
    "拍照发了朋友圈",
    "觉得特别放松",
    "说下次要带上大家",
    "觉得有点贵",
    "印象非常深刻",
]
PREFERENCES = [
    "喜欢吃辣",
    "不喜欢香菜",
    "对花生过敏",
    "最爱喝奶茶",
    "讨厌下雨天",
    "喜欢周杰伦的歌",
    "养了一只橘猫",
    "每天早上跑步",
    "在学日语",
    "打算明年考研",
    "喜欢看科幻小说",
    "是左撇子",
]
QUERY_TEMPLATES = [
    "{name}上次去{place}干什么了",
    "你还记得{name}{activity}是哪天吗",
    "谁{preference}",
    "{name}喜欢什么",
    "我们上次在{place}玩得怎么样",
    "{name}最近在忙什么",
    "{name}和谁一起去的{place}",
    "有谁去过{place}",
    "{name}{preference}吗",
    "上个月谁{activity}",
]


def _day(rng: random.Random) -> date:
    return date(2023, 1, 1) + timedelta(days=rng.randrange(0, 1000))


def _fact(rng: random.Random) -> str:
    name = rng.choice(NAMES)
    day = _day(rng)
    when = f"{day.year}年{day.month}月{day.day}日"
    if rng.random() < 0.2:
        return f"{name}{rng.choice(PREFERENCES)}，这是{when}聊天时提到的。"
    return (
        f"{name}{when}{rng.choice(COMPANIONS)}在{rng.choice(PLACES)}{rng.choice(ACTIVITIES)}，{rng.choice(FEELINGS)}。"
    )


def facts(count: int, seed: int = 7) -> list[str]:
    """``count`` distinct facts, the same list for the same (count, seed) prefix."""
    rng = random.Random(seed)
    seen: set[str] = set()
    result: list[str] = []
    while len(result) < count:
        text = _fact(rng)
        if text not in seen:
            seen.add(text)
            result.append(text)
    return result


def exact_copy(text: str, number: int) -> str:
    """The same text once folded: other final punctuation, a space inside, or no final full stop
    (full-width digits are no copy: the write path folds them, and the copy is refused as a
    duplicate at once)."""
    kind = number % 3
    if kind == 0:
        return text.rstrip("。") + "！"
    if kind == 1:
        return text[:2] + " " + text[2:]
    return text.rstrip("。")


def queries(count: int, seed: int = 11) -> list[str]:
    """Short, distinct Chinese chat queries about the same people, places and habits."""
    rng = random.Random(seed)
    seen: set[str] = set()
    result: list[str] = []
    while len(result) < count:
        text = rng.choice(QUERY_TEMPLATES).format(
            name=rng.choice(NAMES),
            place=rng.choice(PLACES),
            preference=rng.choice(PREFERENCES),
            activity=rng.choice(ACTIVITIES),
        )
        if text not in seen:
            seen.add(text)
            result.append(text)
    return result


def _progress(done: int, total: int, started: float) -> None:
    rate = done / max(1e-9, time.perf_counter() - started)
    print(f"  embedded {done}/{total} ({rate:.0f}/s)", file=sys.stderr, flush=True)


def cached_vectors(texts: Sequence[str], threads: int = 2, batch: int = 32) -> np.ndarray:
    """Local-USE vectors of ``facts(len(texts))``, computed once per corpus size prefix and cached.

    The cache holds the largest corpus computed so far; a smaller request is served from its
    prefix (``facts`` is prefix-stable). Partial work is checkpointed every few thousand rows.
    """
    from amrita_plugin_cognition.index.embedders import LocalUSEEmbedder

    CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    texts_path = CACHE_ROOT / f"corpus-{CORPUS_VERSION}-texts.json"
    vectors_path = CACHE_ROOT / f"corpus-{CORPUS_VERSION}-vectors.npy"
    have_texts: list[str] = json.loads(texts_path.read_text(encoding="utf-8")) if texts_path.exists() else []
    have = np.load(vectors_path) if vectors_path.exists() else np.zeros((0, 512), dtype=np.float32)
    have_texts = have_texts[: len(have)]
    if have_texts[: len(texts)] == list(texts[: len(have_texts)]) and len(have_texts) >= len(texts):
        return have[: len(texts)]
    if have_texts != list(texts[: len(have_texts)]):
        have_texts, have = [], np.zeros((0, 512), dtype=np.float32)
    embedder = LocalUSEEmbedder(threads=threads)
    started = time.perf_counter()
    chunks = [have]
    done = len(have_texts)
    checkpoint = done
    while done < len(texts):
        part = list(texts[done : done + batch])
        chunks.append(embedder.embed_sync(part))
        done += len(part)
        if done - checkpoint >= 5000 or done == len(texts):
            matrix = np.vstack(chunks).astype(np.float32)
            chunks = [matrix]
            partial = vectors_path.with_suffix(".partial.npy")
            np.save(partial, matrix)
            texts_path.write_text(json.dumps(list(texts[:done]), ensure_ascii=False), encoding="utf-8")
            os.replace(partial, vectors_path)
            checkpoint = done
            _progress(done, len(texts), started)
    return np.vstack(chunks)[: len(texts)]


class PrecomputedEmbedder:
    """The local embedder, serving known texts from precomputed vectors of the same model."""

    def __init__(self, texts: Sequence[str], vectors: np.ndarray, threads: int = 1) -> None:
        from amrita_plugin_cognition.index.embedders import LocalUSEEmbedder

        self.inner = LocalUSEEmbedder(threads=threads)
        self.fingerprint = self.inner.fingerprint
        self._known = {text: index for index, text in enumerate(texts)}
        self._vectors = vectors

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = [self._known.get(text) for text in texts]
        if all(row is not None for row in rows):
            return self._vectors[[row for row in rows if row is not None]]
        return await self.inner.embed(texts)


class SyntheticEmbedder:
    """Vectors of the local model's dimension and fingerprint, made without the model, for stores
    too large to embed (``bench/scale.py``: a million memories). A text's vector is the normalised
    sum of fixed random vectors, one per character and per character pair (hashed into
    ``buckets`` rows), so texts that share words are near each other and a query finds the facts it
    names, as with a real model (quality is measured on the real sets, never here). A query is also
    encoded by the local model itself, its result unused: a turn pays what a real query costs."""

    def __init__(self, buckets: int = 4096, seed: int = 23, threads: int = 1) -> None:
        from amrita_plugin_cognition.index.embedders import LocalUSEEmbedder

        self.live = LocalUSEEmbedder(threads=threads)
        self.fingerprint = self.live.fingerprint
        self._buckets = buckets
        table = np.random.default_rng(seed).standard_normal((buckets, self.fingerprint.dimension))
        self._table = table.astype(np.float32)

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        rows: list[np.ndarray] = []
        for text in texts:
            grams = [*text, *(text[start : start + 2] for start in range(len(text) - 1))] or [""]
            buckets = [zlib.crc32(gram.encode()) % self._buckets for gram in grams]
            rows.append(self._table[buckets].sum(axis=0))
        matrix = np.vstack(rows) if rows else np.zeros((0, self.fingerprint.dimension), dtype=np.float32)
        return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.vectors(texts)

    async def embed_queries(self, texts: Sequence[str], timeout: float | None = None) -> np.ndarray:
        await self.live.embed_queries(texts, timeout)
        return self.vectors(texts)


class CachedTextEmbedder:
    """The local embedder, every text's vector kept on disk by its text
    (``CACHE_ROOT/texts-{CORPUS_VERSION}-*``): a chat of texts that are not ``facts`` (hand-written
    ones, copies) is embedded once, then served from the cache on every rerun."""

    def __init__(self, threads: int = 1) -> None:
        from amrita_plugin_cognition.index.embedders import LocalUSEEmbedder

        self.inner = LocalUSEEmbedder(threads=threads)
        self.fingerprint = self.inner.fingerprint
        CACHE_ROOT.mkdir(parents=True, exist_ok=True)
        self._texts_path = CACHE_ROOT / f"texts-{CORPUS_VERSION}-texts.json"
        self._vectors_path = CACHE_ROOT / f"texts-{CORPUS_VERSION}-vectors.npy"
        texts: list[str] = []
        vectors = np.zeros((0, 512), dtype=np.float32)
        if self._texts_path.exists() and self._vectors_path.exists():
            texts = json.loads(self._texts_path.read_text(encoding="utf-8"))
            vectors = np.load(self._vectors_path)
            texts = texts[: len(vectors)]
        self._texts = texts
        self._vectors = vectors
        self._row = {text: index for index, text in enumerate(texts)}

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(text for text in texts if text not in self._row))
        if missing:
            fresh = await self.inner.embed(missing)
            self._vectors = np.vstack([self._vectors, np.asarray(fresh, dtype=np.float32)])
            for text in missing:
                self._row[text] = len(self._texts)
                self._texts.append(text)
            partial = self._vectors_path.with_suffix(".partial.npy")
            np.save(partial, self._vectors)
            self._texts_path.write_text(json.dumps(self._texts, ensure_ascii=False), encoding="utf-8")
            os.replace(partial, self._vectors_path)
        return self._vectors[[self._row[text] for text in texts]]


if __name__ == "__main__":
    # Pre-build the vector cache: uv run python bench/_corpus.py [COUNT]
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    began = time.perf_counter()
    matrix = cached_vectors(facts(total))
    print(f"{len(matrix)} vectors in {time.perf_counter() - began:.0f} s -> {CACHE_ROOT}")
