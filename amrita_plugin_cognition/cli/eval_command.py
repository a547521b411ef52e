"""``cognition eval KIND FILE...``: the LLM-free evaluation harness on JSONL files.

``admission``, ``time`` and ``gate`` are pure functions of the files: nothing is loaded for them.
They take several files or folders (a folder: its ``KIND*.jsonl``); with more than one file the
report is the pooled one (the counts of every file added up) with each file's own under
``files``. Every rate comes with its 95 % Wilson interval (``intervals``).
``recall`` stores the file's memories through the real write path in a throw-away folder
(NoneBot without a driver, SQLite and embedded Chroma there) and asks every query through the
real recall; the folder is removed afterwards, whatever happened, unless ``--keep``. The file is
read and checked before anything is created, so a malformed line or an empty file (exit 2)
leaves nothing behind. The formats are documented in ``docs/evaluation.md``.

``admission --model PRESET`` is the one kind that calls a model: every line is also asked of the
historian's model, with the historian's own prompt (``eval_admission_model.py``), and its flags
are scored alone and with the rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click

from . import render_eval
from .commands import CLOSE_TIMEOUT_SECONDS, PACKAGE, cognition, emit, json_option
from .failures import EXIT_USAGE, fail, guarded
from .sealed import sealed_files, without_texts

#: The kinds of evaluation and what each measures (shown by ``eval --help``).
KINDS = {
    "recall": "召回：在临时目录中经真实写入路径存入文件里的记忆，再逐条经真实召回查询，"
    "报告 recall@1/5/10/20、hit@5、MRR（只计列出相关记忆的查询）、隔离泄漏条数、过时记忆排在前面的次数与召回延迟",
    "admission": "准入：逐条判断文本能否存为记忆（凭据、“别记下来”等应拒绝），报告各原因的拦截率与误拒率",
    "time": "时间解析：把文本里的第一个相对时间（昨天、下周三……）按说话时刻解析为日期，"
    "报告准确率、误解析、漏解析与日期错误",
    "gate": "绝对化判定：判断改写后的事实是否自洽（不含“他”“昨天”“这里”等相对指代），报告准确率、误拦率与漏判率",
    "dedup": "近似重复：用默认本地嵌入模型的向量和逐项比对（人、时间、地点、数量、否定、计划/已做）判断两条事实"
    "是否同一件事，报告查准率、查全率、判错的样例，以及只看余弦相似度在同一查全率下的查准率",
}

EVAL_HELP = "\n".join(
    [
        "评测 KIND，用例来自 JSONL 文件 FILE（每行一个 JSON 对象，空行与 # 开头的行忽略）；"
        "除 admission --model 外不调用 LLM。"
        "admission、time、gate、dedup 可以给多个文件或目录（目录里的 KIND*.jsonl），逐个文件报告并给出合计；"
        "每个比例都附 95 % 置信区间（Wilson）。",
        "",
        "\b",
        *(f"{kind:<10} {text}" for kind, text in KINDS.items()),
        "",
        "admission 加 --model PRESET 时，另把每一行按史官的提示词交给这个模型判断（secret、do_not_remember、"
        "about_someone_else 三个标记），报告模型单独与规则+模型的拦截率和误拒率；调用失败的行单独列出。",
        "",
        "文件格式与报告格式见仓库中的 docs/evaluation.md。文件有误（某行格式不对、没有任何用例）时"
        "报出行号并以 2 退出，不会输出半截报告。",
    ]
)


@cognition.command("eval", help=EVAL_HELP, short_help="评测召回、准入、时间解析、绝对化判定与近似重复")
@click.argument("kind", type=click.Choice(list(KINDS)), metavar="KIND")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path), metavar="FILE...")
@json_option
@click.option("--keep", is_flag=True, help="recall：保留临时数据目录以便检查")
@click.option(
    "--model",
    "model",
    default=None,
    metavar="PRESET",
    help="admission：另请这个模型预设（Amrita 的预设名或预设 JSON 文件）按史官的提示词逐条判断",
)
def eval_command(kind: str, files: tuple[Path, ...], as_json: bool | None, keep: bool, model: str | None) -> None:
    if model is not None and kind != "admission":
        raise click.UsageError("--model 只用于 admission")
    paths = evaluation_files(kind, files)
    if model is not None and len(paths) > 1:
        raise click.UsageError("--model 一次只评测一个文件")
    if kind == "dedup":
        report = guarded(lambda: _dedup(paths))
    elif len(paths) == 1:
        report = guarded(lambda: evaluate(kind, paths[0], keep, model))
    else:
        report = guarded(lambda: pooled(kind, {str(path): evaluate(kind, path) for path in paths}))
    emit(redacted_if_sealed(report, paths), as_json, render_eval.eval_report)


def redacted_if_sealed(report: dict[str, Any], paths: list[Path]) -> dict[str, Any]:
    """``report`` as is, or, when any of ``paths`` is sealed (``sealed.is_sealed``), with ids and
    counts only (``sealed.without_texts``), said on stderr."""
    sealed = sealed_files(paths)
    if not sealed:
        return report
    names = "、".join(str(path) for path in sealed)
    click.echo(f"{names} 属于封存的测试集（SEALED.json）：报告只列编号与计数，不列文本", err=True)
    return {**without_texts(report), "texts_withheld": [str(path) for path in sealed]}


def evaluation_files(kind: str, given: tuple[Path, ...]) -> list[Path]:
    """The files to score: each file as given, each folder's ``KIND*.jsonl`` in name order.
    ``recall`` takes exactly one file; a folder without such files is bad input (exit 2)."""
    paths: list[Path] = []
    for path in given:
        if path.is_dir():
            found = sorted(path.glob(f"{kind}*.jsonl"))
            if not found:
                raise fail(f"{path}：目录里没有 {kind}*.jsonl 文件", EXIT_USAGE)
            paths += found
        else:
            paths.append(path)
    if kind == "recall" and (len(paths) != 1 or given[0].is_dir()):
        raise fail("recall 只接受一个文件", EXIT_USAGE)
    unique: dict[Path, Path] = {}
    for path in paths:  # a file named twice (itself and in its folder) is counted once
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


#: How many failing cases a pooled report keeps (as each file's own report does).
POOLED_FAILURES = 20


def pooled(kind: str, reports: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The report of every file's cases together (their counts added up, the rates and intervals
    computed from the sums), with each file's own report under ``files``."""
    from . import evaluation
    from .eval_gate import gate_report
    from .eval_time import time_report

    counts = [report["counts"] for report in reports.values()]
    failures = [{"file": name, **item} for name, report in reports.items() for item in report.get("failures") or []]
    if kind == "admission":
        by_reason: dict[str, list[int]] = {}
        for count in counts:
            for reason, (caught, lines) in count["caught_by_reason"].items():
                tally = by_reason.setdefault(reason, [0, 0])
                tally[0] += caught
                tally[1] += lines
        total = {
            "cases": sum(count["cases"] for count in counts),
            "caught_by_reason": by_reason,
            "false_rejections": [sum(count["false_rejections"][i] for count in counts) for i in (0, 1)],
        }
        report = evaluation.admission_report(total)
    else:
        summed = {key: sum(count[key] for count in counts) for key in counts[0]}
        report = (time_report if kind == "time" else gate_report)(summed, failures[:POOLED_FAILURES])
    return {**report, "files": reports}


def evaluate(kind: str, file: Path, keep: bool = False, model: str | None = None) -> dict[str, Any]:
    """The report of ``kind`` on ``file``; a file the harness cannot score ends with exit 2."""
    from . import evaluation

    try:
        if kind == "admission" and model is not None:
            from .eval_admission_model import PresetError, run_admission_model_eval

            try:
                return run_admission_model_eval(file, model)
            except PresetError as error:
                raise fail(str(error), EXIT_USAGE) from error
        if kind == "admission":
            return evaluation.run_admission_eval(file)
        if kind == "time":
            from .eval_time import run_time_eval

            return run_time_eval(file)
        if kind == "gate":
            from .eval_gate import run_gate_eval

            return run_gate_eval(file)
        evaluation.parse_recall_file(file)  # checked before any folder exists
    except evaluation.EvalInputError as error:
        raise fail(f"{file}：{error.zh}", EXIT_USAGE) from error
    return _recall(file, keep)


def _dedup(paths: list[Path]) -> dict[str, Any]:
    """Every file read and checked (exit 2 naming the file and line), then embedded and judged."""
    from . import evaluation
    from .eval_dedup import parse_dedup_file, run_dedup_eval

    parsed = {}
    for path in paths:
        try:
            parsed[path] = parse_dedup_file(path)
        except evaluation.EvalInputError as error:
            raise fail(f"{path}：{error.zh}", EXIT_USAGE) from error
    return run_dedup_eval(parsed)


def _recall(file: Path, keep: bool) -> dict[str, Any]:
    from . import boot

    if boot.nonebot_ready():
        # NoneBot is already up in this process (on a bot's database): a fresh process of its own.
        return _recall_in_subprocess(file, keep)
    with boot.throwaway_engine_only("cognition-eval-", keep) as base:
        # NoneBot's start dropped the early import of this package: from here on, its modules
        # are the ones the engine is built from (their records and enums are the engine's own).
        evaluation = importlib.import_module(f"{PACKAGE}.cli.evaluation")
        memories, queries = evaluation.parse_recall_file(file)
        with contextlib.redirect_stdout(sys.stderr):
            return asyncio.run(_recall_run(evaluation, base, memories, queries))


async def _recall_run(evaluation: Any, base: Path, memories: list[Any], queries: list[Any]) -> dict[str, Any]:
    from nonebot_plugin_orm import get_session

    runtime = importlib.import_module(f"{PACKAGE}.runtime")
    factory = importlib.import_module(f"{PACKAGE}.engine.factory")
    from .runtime import plugin_data_dir

    # Defaults, unless COGNITION_* environment variables say otherwise (e.g. the embedder).
    engine = factory.build_engine(runtime.plugin_config(), plugin_data_dir(base), get_session)
    try:
        await engine.start()
        await engine.index.check_fingerprint()
        report: dict[str, Any] = await evaluation.run_recall_eval(memories, queries, engine, evaluation.stderr_progress)
        return report
    finally:
        with contextlib.suppress(asyncio.TimeoutError, Exception):
            await asyncio.wait_for(engine.close(), CLOSE_TIMEOUT_SECONDS)


def _recall_in_subprocess(file: Path, keep: bool) -> dict[str, Any]:
    from .boot import debug_enabled

    args = [sys.executable, "-m", PACKAGE, *(["--debug"] if debug_enabled() else []), "eval", "recall", str(file)]
    args += ["--json", *(["--keep"] if keep else [])]
    completed = subprocess.run(args, stdout=subprocess.PIPE, text=True, check=False)  # stderr passes through
    if completed.returncode != 0:
        raise click.exceptions.Exit(completed.returncode)
    try:
        report: dict[str, Any] = json.loads(completed.stdout)
    except ValueError as error:
        raise fail(f"评测子进程的输出不是 JSON：{completed.stdout[:200]}") from error
    return report
