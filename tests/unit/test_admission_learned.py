"""Admission's learned second opinions (domain/admission/learned.py): what they read, when they are
asked, what a yes does, and that the shipped weights are what the training script makes of the
train split (no hand-edited model): a fast check of the recorded input hash on every run, the
retraining itself only when the inputs changed or when ``COGNITION_RETRAIN_CHECK=1`` asks for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from script_modules import load_script

from amrita_plugin_cognition.domain.admission import PLACEHOLDER, admit, credential_view, learned, redact
from amrita_plugin_cognition.domain.admission.intent import PART_OVERRULED_BELOW, RULES_OVERRULED_BELOW
from amrita_plugin_cognition.domain.admission.learned import (
    CREDENTIAL_FILE,
    DO_NOT_REMEMBER_FILE,
    MAX_N,
    REQUEST_CHECK_FILE,
    LinearModel,
    grams,
)
from amrita_plugin_cognition.domain.admission.normalise import fold
from amrita_plugin_cognition.domain.admission.requests import without_quotes

pytestmark = pytest.mark.embedded_only

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def _always(answer: bool) -> LinearModel:
    return LinearModel({}, 60.0 if answer else -60.0, 0.5)


@pytest.fixture
def models_say() -> Iterator[dict[str, bool]]:
    """The models replaced by ones that always answer as the test says (the request check: yes,
    so that it overrules nothing unless a test says so)."""
    answers = {DO_NOT_REMEMBER_FILE: False, CREDENTIAL_FILE: False, REQUEST_CHECK_FILE: True}
    saved = learned.shipped_model

    def chosen(name: str) -> LinearModel:
        return _always(answers[name])

    learned.shipped_model = chosen  # type: ignore[assignment]
    try:
        yield answers
    finally:
        learned.shipped_model = saved


def test_features_are_character_and_shape_grams() -> None:
    plain = grams("别记123")
    assert {"别", "别记", "\x02别", "23\x03"} <= plain
    assert not any(gram.startswith("§") for gram in plain)
    shaped = grams("码 653091", shape=True)
    assert "§000" in shaped and "§ 00" in shaped  # six digits are one shape, whatever they are
    assert grams("码 111111", shape=True) & {g for g in shaped if g.startswith("§")} == {
        g for g in shaped if g.startswith("§")
    }


def test_a_model_file_of_other_features_is_refused() -> None:
    with pytest.raises(ValueError, match="max_n"):
        LinearModel.from_json({"max_n": MAX_N + 1, "bias": 0, "threshold": 0.5, "weights": {}})


def test_the_do_not_remember_model_is_asked_only_about_a_memory_word(models_say: dict[str, bool]) -> None:
    models_say[DO_NOT_REMEMBER_FILE] = True
    assert admit("今天中午吃了兰州拉面，味道还行").stored_as_is
    # a memory word, but nothing turned away: no request, whatever the words
    for text in (
        "这是一条来自安装包的测试记忆。",
        "鱼的记忆只有七秒是真的吗",
        "给我讲个关于记忆的冷知识吧",
        "你记不记得我上次说的",
    ):
        assert admit(text).stored_as_is, text
    verdict = admit("机器人，这条你就当耳旁风吧")  # no rule names it
    assert not verdict.admit and verdict.reason == "do_not_remember"
    # plainly about something else: the speaker's own forgetting, a wish to be remembered
    assert admit("我忘了我刚说的是啥了").stored_as_is
    assert admit("这个要记住喔，下礼拜考").stored_as_is
    # someone else's quoted words are not read
    assert admit("朋友跟我说“这事你听完就删了吧”，我觉得他想多了").stored_as_is


def test_without_the_request_model_the_rules_name_the_requests(models_say: dict[str, bool]) -> None:
    assert admit("机器人，这条你就当耳旁风吧").stored_as_is
    assert not admit("这段别记哈，我乱说的").admit  # a rule names this one


def test_the_check_model_overrules_the_rules_only_in_chinese_it_can_read(models_say: dict[str, bool]) -> None:
    models_say[REQUEST_CHECK_FILE] = False  # finds every request very unlikely
    assert admit("这段别记哈，我乱说的").stored_as_is
    # English, pinyin, Korean and too little Chinese are the rules' alone
    for text in ("dont remember this pls 我随口吐槽的", "bie ji a 求你", "방금 내가 한 말 저장하지 마", "别记 ok"):
        verdict = admit(text)
        assert not verdict.admit and verdict.reason == "do_not_remember", text


@pytest.mark.parametrize(
    "text",
    [
        "不要放太多盐 记住了啊 上次咸死了",
        "你的记忆满了会自动删掉旧的吗",
        "别把小时候的事一直记着，爸妈也不容易",
    ],
)
def test_the_shipped_check_overrules_a_rule_that_misread(text: str) -> None:
    """Each of these trips a rule (advice, a question about the memory, a grudge), and the check
    model sets it right."""
    from amrita_plugin_cognition.domain.admission.intent import _chinese_rules_ask

    assert _chinese_rules_ask(without_quotes(fold(text))), text
    assert admit(text).stored_as_is, text


@pytest.mark.parametrize(
    "content",
    [
        "下午三点开会，会议室在三楼",
        "顺丰单号SF1428736509214 腊肉那单 客户问到哪了",
        "今天好累 想吃火锅",
        "楼道杂物周五前清走 不然当垃圾处理",
        "六级587 够用了吧",
        "commit 7f3a2c9 修好了导入的bug",
    ],
)
@pytest.mark.parametrize("form", ["这个别记：{}", "{}，这条别存哈", "{} 你就当我没说吧", "这段你别记下来 {}"])
def test_a_request_stands_whatever_it_carries(form: str, content: str) -> None:
    """The check model learned requests joined to ordinary sentences: what a request carries (a
    meeting, an order number) does not make it look like talk about those."""
    text = form.format(content)
    verdict = admit(text)
    assert not verdict.admit and verdict.reason == "do_not_remember", text


def test_the_credential_model_is_asked_only_about_a_value_or_a_security_question(models_say: dict[str, bool]) -> None:
    models_say[CREDENTIAL_FILE] = True
    assert admit("明天下午三点开会，记得带电脑").stored_as_is  # nothing of a secret's shape
    assert admit("回滚到 4c090cea7a24129199532290b5cd33e9fec3d7c6").stored_as_is  # a digest
    assert admit("收款地址 bc1q0h3sdj3mgpxxda4h6vd83ht2uv2q793504tzun 随缘").stored_as_is  # public by what it is
    assert admit("密保问题：你母亲的名字是什么来着").stored_as_is  # asked, not answered
    # plain codes (short numbers, capitals and digits) with no word that may name a code
    plain_codes = ("舞蹈课改到 B203 了", "控制器 48V350W 坏了", "宿舍是 512 不是 521", "那个 CVE-2024-3094 修了没")
    for plain in plain_codes:
        assert admit(plain).stored_as_is, plain
    assert not admit("门禁换成 B203X 了").admit  # a lock named
    # a value: hidden where the rest is worth keeping, refused when little else is there
    kept = admit("车库卷帘门遥控坏了，旁边按键面板输 71842 也能开，明天找物业修遥控器")
    assert kept.admit and kept.redacted and "71842" not in kept.text and PLACEHOLDER in kept.text
    assert not admit("给你 053721 快").admit
    # a security answer has no shape: the message is refused whole, and a log line hides all of it
    answer = "那个银行问的问题是我小学的学校 答案是红旗第三小学"
    assert not admit(answer).admit
    assert redact(answer) == PLACEHOLDER
    assert "71842" not in redact("面板输 71842 也能开")


def test_the_shipped_models_say_yes_only_past_their_threshold() -> None:
    model = learned.do_not_remember_model()
    assert 0.5 <= model.threshold < 1.0 and model.weights
    text = fold("机器人，脑子里把这句话 ctrl+z 掉吧")
    assert model.says_yes(text) == (model.probability(text) >= model.threshold)


training = load_script("train_admission_model")
RETRAIN = "uv run python scripts/train_admission_model.py (then commit the models and training.json)"


def _lines() -> list[str]:
    texts: list[str] = []
    for folder in ("train", "dev"):
        for path in sorted((DATA / folder).glob("admission_*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    texts.append(json.loads(line)["text"])
    return texts


def _retrained_differ(tmp_path: Path) -> list[str]:
    """Retrain into ``tmp_path`` (the whole cross-validated run: minutes) and list where the
    result and the shipped models differ: hyper-parameters, thresholds, and verdicts on every
    labelled line of the train and dev splits (the request check at both of its cut points)."""
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "train_admission_model.py"), "--output", str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=1800,
    )
    found: list[str] = []
    shipped_record = json.loads((training.PACKAGE / training.RECORD_FILE).read_text(encoding="utf-8"))
    retrained_record = json.loads((tmp_path / training.RECORD_FILE).read_text(encoding="utf-8"))
    for key in training.TASKS:
        for field in ("l2", "epochs"):
            before, after = shipped_record["models"][key][field], retrained_record["models"][key][field]
            if before != after:
                found.append(f"{key}: {field} {before} shipped, {after} retrained")
    texts = [fold(text) for text in _lines()]
    views = {
        DO_NOT_REMEMBER_FILE: [without_quotes(text) for text in texts],
        REQUEST_CHECK_FILE: [without_quotes(text) for text in texts],
        CREDENTIAL_FILE: [credential_view(text) for text in texts],
    }
    for name, read in views.items():
        shipped = learned.shipped_model(name)
        retrained = LinearModel.from_json(json.loads((tmp_path / name).read_text(encoding="utf-8")))
        if abs(shipped.threshold - retrained.threshold) >= 1e-3:
            found.append(f"{name}: threshold {shipped.threshold} shipped, {retrained.threshold} retrained")
        cuts = (RULES_OVERRULED_BELOW, PART_OVERRULED_BELOW) if name == REQUEST_CHECK_FILE else (None,)
        for cut in cuts:

            def says(model: LinearModel, text: str, cut: float | None = cut) -> bool:
                return model.says_yes(text) if cut is None else model.probability(text) >= cut

            differ = [text for text in read if says(shipped, text) != says(retrained, text)]
            if differ:
                found.append(
                    f"{name}: {len(differ)} verdicts differ (cut {cut or shipped.threshold}), e.g. {differ[:3]}"
                )
    return found


def test_the_models_were_trained_on_todays_inputs(tmp_path: Path) -> None:
    """The hash of the training inputs (the script, domain/admission/*.py, tests/data/train) is the
    one recorded with the models. Only when it is not are the models retrained and compared."""
    recorded = json.loads((training.PACKAGE / training.RECORD_FILE).read_text(encoding="utf-8"))["inputs_sha256"]
    if recorded == training.input_hash():
        return
    differ = _retrained_differ(tmp_path)
    if differ:
        pytest.fail(
            f"the admission code or its training data changed and the models differ: {differ}; retrain: {RETRAIN}"
        )
    pytest.fail(f"the training inputs changed (the models still agree): record them by retraining: {RETRAIN}")


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("COGNITION_RETRAIN_CHECK"), reason="set COGNITION_RETRAIN_CHECK=1 to retrain (minutes)"
)
def test_the_shipped_models_are_what_the_training_script_makes(tmp_path: Path) -> None:
    """On demand: retrained from the train split, the models are the shipped ones (no hand-edited
    weights), whatever the recorded hash says."""
    assert _retrained_differ(tmp_path) == []


def test_overlapping_candidates_are_hidden_whole(models_say: dict[str, bool]) -> None:
    """A code in groups and a number inside it are both candidates: nothing of either is left."""
    models_say[CREDENTIAL_FILE] = True
    text = "他给的那串 QWER 7391 ASDF ZXCV 我抄本子上了，今天下午还去打了球"
    verdict = admit(text)
    assert verdict.redacted and verdict.text == "他给的那串 [已隐去] 我抄本子上了，今天下午还去打了球"
    assert redact(text) == verdict.text


def test_english_sentences_are_judged_by_the_rules_alone(models_say: dict[str, bool]) -> None:
    models_say[CREDENTIAL_FILE] = models_say[DO_NOT_REMEMBER_FILE] = True
    for text in (
        "my username is DarkLord99",
        "our table number is XK2941",
        "have you heard the news",
        "docker-compose.yml",
    ):
        assert admit(text).stored_as_is, text
    assert not admit("my password is Tr0ub4dor&3").admit  # a rule's
    # without Chinese, the credential model is asked when a secret is named or values are all there is
    assert not admit("zhangfan_1993 / Fa!9k2LmQe").admit
    assert not admit("G-126414 is your Google verification code.").admit


@pytest.mark.parametrize(
    "text", ["不要记录我刚说的这个词", "不要记住这个梗", "别记这条我没别的什么意思", "你别存这个我没啥意思"]
)
def test_a_request_is_not_taken_for_words_only_named(text: str) -> None:
    assert not admit(text).admit, text


def test_a_long_run_of_question_marks_is_judged_in_linear_time() -> None:
    import time

    started = time.perf_counter()
    admit("密保" + "？" * 20_000 + "a")
    redact("密保" + "？" * 20_000 + "a")
    assert time.perf_counter() - started < 1.0
