"""Admission's rules name classes, not products (issue 21): each class below is stated in one line and
caught whatever the product, app, bank, site or tool is called. A name the old lists knew stays as one
example among others of its class, beside names they never knew and the look-alikes the class keeps."""

from __future__ import annotations

import pytest

from amrita_plugin_cognition.domain.admission import PLACEHOLDER, admit, credential_model_consulted, redact
from amrita_plugin_cognition.domain.admission.normalise import fold

pytestmark = pytest.mark.embedded_only


def _caught(text: str) -> None:
    verdict = admit(text)
    assert (not verdict.admit and verdict.reason == "credential") or verdict.redacted, (text, verdict)


def _kept(text: str) -> None:
    verdict = admit(text)
    assert verdict.stored_as_is, (text, verdict)


# --- a word that holds "password" names a manager, a field or a file ------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "我把所有密码都交给 1Password 管了",
        "密码管理器 Proton Pass 还是 1Password 好",
        "1Password8 的密码库同步挺快",
        "密码都存在 MyPasswords2 那个文件里",
        "表里 password2 那一列是旧的哈希，密码早就不用它了",
    ],
)
def test_a_word_holding_password_is_a_name_not_the_secret(text: str) -> None:
    _kept(text)


@pytest.mark.parametrize(
    "text",
    [
        "my 1Password master password is Tea&Dumpling_2019",
        "我的密码是 Password2024!",
        "密码：1password",
    ],
)
def test_a_password_right_after_its_cue_is_caught_even_when_it_holds_the_word(text: str) -> None:
    _caught(text)


# --- a handle after the word for one --------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "他的微信号是 wxid_abc123",
        "抖音号 dy_lily99",
        "小红书号：xhs2024abc 来关注",
        "Steam ID: gaben_1337 加我好友",
        "LINE id: mia_0412",
        "邮箱 wangli@163.com/微信 wangli88 都可以",
        "邮箱 wangli@163.com/电话 a1380013 都行",
    ],
)
def test_a_handle_after_the_word_for_one_is_asked_of_no_one(text: str) -> None:
    assert not credential_model_consulted(fold(text)), text
    _kept(text)


def test_an_account_traded_with_its_password_is_no_handle() -> None:
    _caught("游戏号6800126630----JOr12J3sWo33Gc5v")


# --- sessions: a cookie's name says what it holds --------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "PHPSESSID=abc123def456ghi789",
        "__Secure-next-auth.session-token=Xk29LmPq8RtZ7wN3yT4uQ1aB6cD 复制这个",
        "_gitlab_session=4f9a2c718b4e4d1a9c6f2e7b5a8d0c13",
        "x-csrftoken: Qm7Tz2LxV9bR4nK8wP3s 放请求头里",
    ],
)
def test_a_session_cookie_is_named_by_what_it_holds(text: str) -> None:
    _caught(text)


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        (
            "SESSDATA=a8f3c2d1%2C1739284561%2C7b9e2%2A81; bili_jct=4e9a0c7d2b1f83e56a7c9d0e1f2a3b4c; "
            "DedeUserID=38810275",
            ("a8f3c2d1", "4e9a0c7d2b1f", "38810275"),
        ),
        (
            "_session_id=8c2f1d9e7a6b; user_token=Qz8mK2xP9vL4; theme=dark 帮我看看登录态",
            ("8c2f1d9e7a6b", "Qz8mK2xP9vL4"),
        ),
    ],
)
def test_a_cookie_string_hides_every_value_once_one_names_a_session(text: str, hidden: tuple[str, ...]) -> None:
    shown = redact(text)
    assert PLACEHOLDER in shown and not any(value in shown for value in hidden), shown


@pytest.mark.parametrize("text", ["width=300; height=200 这样设置就行", "sessionid 过期了要重新登录"])
def test_pairs_that_name_no_session_and_a_session_without_a_value_are_kept(text: str) -> None:
    _kept(text)


# --- a short option is a password in a command that logs in ----------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "redis-cli -h 10.0.0.5 -p 6379 -a Zq8vLmP2xR 连上去看看",
        "mongo -u admin -p Tiger2024x --authenticationDatabase admin",
        "pgcli -h 10.0.0.3 -u app -p Zk8!qw2Lm shop",
        "docker login -u bob -p Hx9#pLm2 registry.example.cn",
        "sshpass -p 'Mango#1386y' ssh root@47.96.135.22",
    ],
)
def test_a_short_option_is_a_password_in_a_command_that_logs_in(text: str) -> None:
    _caught(text)


@pytest.mark.parametrize(
    "text",
    [
        "mkdir -p /home/deploy/app 然后 cd 进去",
        "ssh -p 2222 root@10.0.0.5 连不上",
        "docker run -d -p 8080:80 --name web nginx",
        "psql -h db01 -U app -p 5432 -d shop",
        "python train.py -p configs/base.yaml",
    ],
)
def test_a_short_option_elsewhere_is_a_port_a_path_or_a_profile(text: str) -> None:
    _kept(text)


# --- keys and tokens by their shape, whoever issued them --------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "给你个token帮我push下固件 ghp_8MHpoKEzViXZya8cdFOcVwWBhqG5KSFdPE0S",
        "glpat-8xKq2LmN4vB7tR1yP0wQ 这个 token 有push权限",
        "sk-ant-api03-Xk29LmPq8RtZ7wN3yT4uQ1aB6cD8eF0gH2iJ4kL 给你",
        "lin_api_Xk29LmPq8RtZ7wN3yT4uQ1aB6cD8eF0gH 这是项目管理工具的",
        "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "SG.Xk29LmPq8RtZ7wN3yT4u.Qz8mK2xP9vL4Ab7Cd1Ef5Gh3Ij6Kl0Mn2Op",
        "机器人 token 5987654321:BBGk9mQ2xR7tB3nZ8sW1yH6cF0dJ5gA4pRz",
        "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs 机器人",
        "AKIAIOSFODNN7EXAMPLQ",
        "ASIAZ7Q2K9LM4XP8RT3W 临时凭证",
        "git clone https://ghp_teR81umX6EzMMpudpB3y5eElwU3yLcwtwE4q@github.com/our-org/backend.git",
    ],
)
def test_a_key_is_known_by_its_shape(text: str) -> None:
    _caught(text)


@pytest.mark.parametrize(
    "text",
    [
        "https://open.feishu.cn/open-apis/bot/v2/hook/3d7e9a1c-5b2f-4e8d-a6c0-9f1b2e3d4c5a",
        "https://hooks.slack.com/services/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",
        "https://discord.com/api/webhooks/1187329450118273645/Xq9vLm2TzR8kWp4NbY7cF3hJd6Sa0Ge1Ku5O",
        "https://hooks.zapier.com/hooks/catch/123456/AbCd9XyZ12345678Qw/",
        "告警 https://api.example.com/v1/webhooks/Xk29LmPq8RtZ7wN3yT4u",
        "https://eth-mainnet.g.alchemy.com/v2/uxGfJvRgNxxw7ruE3JvVglV0A43z-cTe",
        "https://mainnet.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161",
        "https://x.oss.example.com/a.pdf?X-Goog-Signature=q8Zk2mAbC",
    ],
)
def test_a_url_that_carries_its_secret(text: str) -> None:
    _caught(text)


@pytest.mark.parametrize(
    "text",
    [
        "看这个 report_final_v2_Xk29LmPq8RtZ7wN3yT4u.pdf",
        "订单号 order-3f9a2c71-8b4e-4d1a-9c6f-2e7b5a8d0c13",
        "文档 https://docs.example.com/v2/getting-started-with-the-api-quickly",
        "https://github.com/org/repo/blob/main/docs/webhooks/setting-up-webhooks-for-beginners",
        "看下 www.example.com 和 v1.2.3 还有 config.local.yaml",
    ],
)
def test_names_files_and_pages_of_a_key_like_shape_are_kept(text: str) -> None:
    _kept(text)


@pytest.mark.parametrize(
    "text",
    [
        "corpsecret=Xk29LmPq8RtZ7wN3yT4uQ1aB6cD",
        "botsecret: Xk29LmPq8RtZ7wN3yT4uQ1aB6cD",
        "appsecret 是 Rk8vN2xQpL5mT9wZ3cYh",
    ],
)
def test_any_word_ending_in_secret_is_a_key_cue(text: str) -> None:
    _caught(text)


# --- a bank: 银行, or a character and 行 ----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "622848是农行的",
        "622202 这个前缀是工行的",
        "6221 开头的是邮储行的卡",
        "6217 开头的一般是中行的借记卡",
        "卡号前缀 436742 是建行龙卡",
        "方案 2023 是可行的",
        "第三行卡住了 6221881234567890123",
    ],
)
def test_a_prefix_said_to_be_a_banks_is_kept(text: str) -> None:
    _kept(text)


@pytest.mark.parametrize("text", ["邮储行卡 6221 8812 3456 7890 123", "转到浙商行卡 6221881234567890123 就行"])
def test_a_number_after_a_banks_card_is_the_card(text: str) -> None:
    _caught(text)
