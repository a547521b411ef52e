"""Secrets found by the message's context rather than by the words right before them.

The adjacency rules (``credentials``) need a value right after its cue ("密码是 x"). People also
write "root 的 pw 是 x", "mm是x啊", "code是123456，刚短信来的", "令牌代码现在是 42832", "备份码
我先发你这：a b c", "那串数字是093103". Here a message is first asked what it is about (a
password, a code, a key, recovery codes), anywhere in it, and then whether it holds a token of the
shape that kind of secret has, that is not one of the ordinary things with a similar shape (a
version, a date, an order or phone number, a price, a URL, an e-mail address, a file name).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..regex_start import compile_guarded
from . import shapes
from .rules import _FIGURATIVE_PASSWORD, BANK_SHORT_NAME, PUZZLE_TALK, named_example

Span = tuple[int, int]

_A = re.ASCII
_I = re.IGNORECASE | _A

# --- what the message is about -------------------------------------------------------------------

_PASSWORD_TALK = compile_guarded(
    _FIGURATIVE_PASSWORD + r"密码(?!学|锁|箱|柜|管理|策略|强度|长度|规则|芯片|破解)|口令|登录(?:要|用)的|密保|账密"
    r"|门禁|锁屏|解锁|解压|保险柜|开机"
    r"|(?<![A-Za-z])(?:pwd|psw|passwd|password|pass|pw|mima|pin)(?![A-Za-z])|(?<![A-Za-z0-9.])mm(?![A-Za-z])"
    r"|(?<![A-Za-z])p\s*[:：]",
    _I,
)
_CODE_TALK = compile_guarded(
    r"验证码|校验码|动态码|短信码|登录码|确认码|认证码|验证器|令牌|安全令|动态口令|(?:帮我|你)(?:输|填)|(?:输|填)一下|(?:赶紧|快|马上)输|输进去|(?<![\u4e00-\u9fff])码(?:是|为|[:：])"
    r"|(?<![A-Za-z])(?:yzm|otp|2fa|authenticator|(?<!error\s)(?<!status\s)code)(?![A-Za-z])",
    _I,
)
# A text message or a verification, and a code or a number it brought ("短信让我验证，收到的那串数字").
_SMS_OR_CHECK = compile_guarded(r"短信|验证")
_A_CODE = compile_guarded(r"码|数字")
_KEY_TALK = compile_guarded(
    r"密钥|秘钥|私钥|令牌|凭证|凭据|(?<![A-Za-z])(?:api[\s_-]?key|secret|token|access[\s_-]?key|app[\s_-]?key"
    r"|private[\s_-]?key|signing[\s_-]?key|aes|hmac)(?![A-Za-z])",
    _I,
)
_RECOVERY_TALK = compile_guarded(
    r"恢复码|备份码|备用码|备用验证码|救援码|紧急码|(?<![A-Za-z])(?:recovery|backup|scratch)\s+codes?(?![A-Za-z])", _I
)
# A message about a key that is public, or about a checksum, names a value that is not secret.
_NOT_SECRET_TALK = compile_guarded(
    PUZZLE_TALK.pattern + r"|公钥|指纹|校验和|哈希|提交|版本|金手指|作弊码|秘籍"
    r"|(?<![A-Za-z])(?:public\s*key|pub\s*key|fingerprints?|checksums?|md5(?:sum)?|sha\d*(?:sum)?"
    r"|hash(?:es|ed|ing)?|commits?|versions?|cheats?|push(?:ed)?|merged?|rebased?|revert(?:ed)?|cherry-pick)(?![A-Za-z])|回滚|合并|推送",
    _I,
)

# --- the shape of a value ------------------------------------------------------------------------

_TOKEN = compile_guarded(r"(?<![\w!@#$%^&*+=/.\-])[A-Za-z0-9!@#$%^&*_.+=/\-]{4,80}(?![\w!@#$%^&*+=/\-])", _A)
_DIGIT_CODE = compile_guarded(r"(?<![\w./\-])(?<!\w:)(?P<v>\d{4,8}|\d{3}\s\d{3}|\d{4}\s\d{4})(?![\w.:/%\-])", _A)
_RECOVERY_CODE = compile_guarded(
    r"(?<![\w\-])(?:[A-Za-z0-9]{4,6}-[A-Za-z0-9]{4,6}|[A-Za-z0-9]{6,12}|\d{4}\s\d{4})(?![\w\-])", _A
)
_ORDINARY = compile_guarded(
    r"^(?:v?\d+(?:\.\d+){1,3}[a-z]?"  # versions, IPs
    r"|\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[:：]\d{2}(?::\d{2})?"  # dates, times
    # e-mail addresses, alone or listed with other ways to reach someone (a@b.com/c@d.com, a@b.com/138…)
    r"|(?:[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+|1[3-9]\d{9}|[48]00-?\d{3}-?\d{4}|0\d{2,3}-\d{7,8})"
    r"(?:[/|](?:[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+|1[3-9]\d{9}|[48]00-?\d{3}-?\d{4}|0\d{2,3}-\d{7,8})?)*"
    r"|(?:tel|uid|uin|id|no)[:：]?\d{5,13}"  # a chat or phone id with its app's name
    # a record named by its date: snap-20261129, backup_20261201, IMG_20261129_0815.jpg
    r"|(?:snap(?:shot)?|backup|bak|logs?|dump|report|export|build|release|img|dsc|screenshot|scan|invoice|archive"
    r"|photo|video|vid|rec(?:ord)?)[_\-.]?(?:19|20)\d{6}(?:[_\-.][A-Za-z0-9]+)*"
    r"|(?:~|\.{1,2})?/[\w.\-]+(?:/[\w.\-]*)+"  # paths: /share/exp2024
    r"|0x[0-9a-f]{40}"  # a wallet's address (a private key is 64 hex digits)
    r"|10\.\d{4,9}/\S+|[nsew]\d{1,3}\.\d+"  # a DOI, a coordinate
    r"|[A-Za-z]\d{2,4}|\d{2,4}[A-Za-z]|(?-i:[A-Z]{2,4}\d{2,5})"  # models, settings, colours: A380, ISO400, 2935C
    r"|[\w\-]+\.(?:jpg|jpeg|png|gif|pdf|docx?|xlsx?|pptx?|txt|zip|rar|7z|mp[34]|py|js|ts|java|go|rs|md|json|csv|exe|apk)"
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # UUIDs
    r"|0x[0-9a-f]{1,16}|(?:cve|cwe|cnvd|cnnvd)-\d{4}-\d{3,7}|ghsa(?:-[0-9a-z]{4}){3}"  # error codes, advisories
    r"|[a-z]{1,3}-[a-z]?\d{2,5}"  # a model's or a product's code: K-3021, SM-G9910
    # names of settings and paths: DASHSCOPE_API_KEY, api_key, global.index-url, /usr/bin
    r"|(?-i:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|/?[a-z]+(?:[_.\-/][a-z]+)+)"
    # amounts and ranges with a unit: 62.3kg, 24-70mm, 5000mah
    r"|(?:\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?(?:kg|g|cm|mm|km|m|ml|l|mb|gb|tb|kb|mah|ah|a|px|fps|hz|khz|mhz|ghz|w|kw|v|k|cal|kcal|h|min|s|ms)){1,3}"
    r"|[A-Za-z]+|\d+)$",
    _I,
)
# Words right before or after a number that make it something else than a code.
_NUMBER_BEFORE = compile_guarded(
    r"(?:订单|单号|运单|快递(?!柜)|取餐|排队|座位|房间|房号|会议|群号|群|qq|电话|手机号|手机尾号|客服|热线|分机|座机|内线|传真|工号|学号|uid|id|车次|航班|邮编|车牌|桌号|床号?|工单|序列号|车架号|vin|sn|imei|s/n|批号|isbn|issn|swift|bic|iban|联行号|行号|波特率|频率|转速|功率|电压|集装箱号|柜号|铅封号|坐标|经度|纬度|doi"
    r"|运费|费用|工资|房租|报价|总价|单价|成本|利润|营业额|销售额|(?<=[\u4e00-\u9fff])费"  # 报名费 480, 考试费另算 120
    r"|(?:收了|卖了|出了|回收价|转手)(?=\s*$)"  # a price in a sale: "二手 switch 收了 1150"
    r"|(?:院校|学校|专业|科目|学科|考点|报考点|单位|行政区划|地区|股票|基金|证券|产品|商品|物料|国家|语言|货币|课程|机场|城市|海关)代码"
    r"|(?<![验证激活安全授权登录令牌动态短信取件开门锁兑换邀请])代码"  # "西综代码是306", not "令牌代码 42832"
    r"|库位|货位|储位|货架|展位|车位|摊位|铺位|柜位|机位|宿舍|寝室|教室|病房|诊室|包间|包厢"  # places
    r"|(?<![a-z])(?:op\.|no\.|iso|iec|gb(?:/t)?|rfc|ieee|ansi|din|jis|astm)"  # catalogues, standards
    r"|流水号|小票|发票|票号|工位|(?<!证)(?<!卡)号码|[后末尾][四4]位|错误码|错误代码|状态码|报错|蓝屏|故障码|异常码|(?:error|status|http)\s*(?:code)?(?![a-z])"
    r"|价格|金额|余额|尾号|第|共|约|大约|花了|付了|转了|￥|¥|\$|门牌|楼|版本|编号|型号|批次|端口|port|年|月|(?<!生)(?<!纪念)日"
    # a record's number, named by the record: 病历号, 住院号, 合同编号, 保单号, 准考证号, 预约号
    r"|(?:病历|病案|住院|门诊|就诊|挂号|体检|化验|档案|合同|保单|理赔|案件|立案|申请|受理|预约|报名|考生|准考证|学籍|借书证|借阅证?|阅览证|读者证?|图书证"
    r"|登记|证书|报告|排队|取号|排号)单?(?:编号|序号|号码|号))[^，。！？,!?\d]{0,4}$",
    _I,
)
# A place numbered: "302 房间", "A3-215 展位".
_PLACE = r"房间|号房|号?(?:展位|摊位|库位|座位|车位|寝室|宿舍|教室|病房|包间)"
_PLACE_AFTER = compile_guarded(rf"\s*(?:{_PLACE})")
_NUMBER_AFTER = compile_guarded(
    r"^\s*(?:元|块|毛|分钱|%|个|次|位|号|年|月|日|点|分钟?|秒|小时|天|周|岁|斤|公斤|kg|km|公里|米|楼|层|室|栋|人|条|张|页|章"
    r"|人民币|rmb|万(?!一)|千(?!万)|百|亿|毫升|ml|度|℃|帧|fps|分辨率|px|mb|gb|kb|mah|w\b|开头|结尾|打头"
    r"|路|届|级|期|集|话|回|局|把|首|部|只|台|辆|件|本|盒|瓶|杯|份|碗|是(?:个|一个|一位|一名|部|首)"
    rf"|{_PLACE}"
    r"|是[^，。,!?！？\d]{0,6}?(?:邮编|区号|电话|号码|热线|车次|航班|股票|代码)"  # "430000 是武汉的邮编"
    # a card's prefix said to be a bank's: "622848是农行的", "436742 是建设银行的卡头"
    rf"|是(?:{BANK_SHORT_NAME}|[\u4e00-\u9fff]{{2}}银行|银联)的(?:卡|卡头|号段|借记卡|信用卡)?\s*(?:[，。！？,!?]|$))",
    _I,
)
# ``NAME=`` before a value (``API_KEY=…``); base64 padding at the end is not one.
_ASSIGNED = compile_guarded(r"[A-Za-z_][\w.\-]*=(?=[^=])")
_TOTP_GROUPS = compile_guarded(r"(?<![A-Za-z0-9])(?:[A-Za-z2-7]{4}[ \t]){3,}[A-Za-z2-7]{4}(?![A-Za-z0-9])")
# A code with a letter prefix ("G-047438" from Google).
_PREFIXED_CODE = compile_guarded(r"(?<![\w\-])[A-Z]-\d{4,8}(?![\w\-])")
_URL = compile_guarded(r"(?:[a-z][a-z0-9+.\-]*://|www\.)\S+", _I)
_EXAMPLE_BEFORE = compile_guarded(
    r"(?:比如|例如|(?<![好就])像是?|举例|示例|样例|格式|形如|类似|e\.g\.|example)[^，。！？,!?]{0,6}$", _I
)
# A name, not a secret: "WiFi 名字是 Office-5G", "用户名 ci-bot".
_NAME_BEFORE = compile_guarded(
    r"(?:名字|名称|名叫|叫做|ssid|网络名|用户名|账号|帐号|用户|邮箱|主机|镜像|image|host|user|连(?:上|接)?|(?<![喊大])叫)[^，。！？,!?]{0,3}$",
    _I,
)
# Where to find someone: a handle after the word for one, any short word before 号 or ID ("微信号是 wxid_x",
# "抖音号: xx_88", "ins id lily_99"), whatever the app, or a word listed after an e-mail address and a slash
# as another way to reach the same person ("wangli@163.com/微信 wangli88 都可以"). Not an account and its
# password traded together ("游戏号6800126630----JOr12J3sWo"): a handle is one word.
_HANDLE_BEFORE = compile_guarded(
    r"(?:[\u4e00-\u9fff]{1,4}|(?<![A-Za-z])[A-Za-z]{1,12}\s?)(?:号|(?<![A-Za-z])id)\s*(?:是|为|[:：])?\s*$"
    r"|@[\w\-]+(?:\.[\w\-]+)+\s*[/／|｜]\s*[^\s/／|｜，。！？,!?]{1,6}\s*(?:是|为|[:：])?\s*$",
    _I,
)
_PAIRED = compile_guarded(r"-{2,}|[/|]")
# The message says the code never came: a number in it is something else.
_NO_CODE = compile_guarded(
    r"(?:码|短信|数字)[^，。,.!?！？]{0,4}?(?:收不到|没收到|不来|没来|发不出|发不了|没有收到|一直没)"
)
# The weakest passwords are said as examples ("不会也是 123456 吧"), not given away.
# A message about a password or a lock: any number in it may be the code that opens it.
_PIN_TALK = compile_guarded(
    r"(?<![A-Za-z])(?:pin|puk)(?![A-Za-z])|密码|口令|门禁|锁屏|解锁|保险柜|保险箱|开机|转盘|密码锁|单元门|门锁|防盗门|智能锁|电子锁",
    _I,
)
_TRIVIAL_DIGITS = compile_guarded(r"^(?:(\d)\1+|0?123456(?:7(?:8(?:9)?)?)?|9?87654(?:3(?:2(?:1)?)?)?|1234|4321)$", _A)
_PIN_BLOCK = compile_guarded(r"忘|错|几位|多少位|位数")
_SERVICE_NUMBER = compile_guarded(r"^(?:100\d\d|95\d{3}|96\d{3}|12[0-3]\d\d|[48]00\d{7}|110|119|120|122)$", _A)


def _before(text: str, start: int) -> str:
    """The words before a value that may say what it is ("订单号是", "error code")."""
    return text[max(0, start - 14) : start]


def _ordinary(value: str) -> bool:
    return bool(_ORDINARY.match(value)) or shapes.is_placeholder(value) or value.lower() in shapes.STOPWORDS


# Numbers everyone writes in chat for what they say, not what they open: 520 (我爱你), 1314 (一生一世),
# 666, 233 (laughing), 886 (bye), 618 and 1111 (shopping days).
_CHAT_NUMBERS = frozenset(
    ("520", "521", "1314", "5201314", "666", "6666", "233", "2333", "23333", "886", "618", "1111", "7758521")
)


def _password_like(value: str) -> bool:
    """A password someone chose: letters with digits (not a word, a number, a file or one of the
    ordinary shapes), or a long random run of letters. Without the cue right before it, letters
    and punctuation alone (``.env.example``, ``docker-compose.yml``) are names, not passwords."""
    value = value.strip(".,")
    if shapes.random_letters(value):
        return True
    if _ordinary(value) or not any(char.isdigit() for char in value) or _OPTION.fullmatch(value):
        return False
    if _NAMES_PASSWORDS.search(value):
        return False
    return shapes.strong_password(value)


# A word that holds "password" (1Password, password_hash, my-passwords.kdbx) names something about
# passwords, a manager, a field or a file; the secret itself is the adjacency rules' when a cue
# stands right before it ("密码是 Password123").
_NAMES_PASSWORDS = compile_guarded(r"password", _I)


# A command-line option ("openssl rand -base64 16"): a name, not a password.
_OPTION = compile_guarded(r"--?[a-z][a-z0-9\-]*")


# A parcel's or a product's number, named as one: "快递 YT7412589630147", "ASIN 是 B08N5WRWNW".
_PUBLIC_ID_BEFORE = compile_guarded(
    r"(?:快递|物流|运单|sku|spu|upc|ean|货号|款号)"
    r"[^，。！？,!?\d\u4e00-\u9fff]{0,4}(?:单号|号码|号)?\s*(?:是|为|[:：])?\s*$",
    _I,
)


# "密码跟 QQ 一样 ln1995qq": the word before the value is what it is compared with, not what it names.
_SAME_AS_BEFORE = compile_guarded(r"(?:一样|相同|同样|一致)的?\s*(?:[:：]\s*)?$")


def _tokens(text: str) -> Iterator[tuple[int, int, str]]:
    """Candidate values (start, end, value): not inside a URL, not named as an example or as one
    of the numbered things (an order, a room …), not a name. In ``NAME=value`` the value is the
    part after the ``=`` (a placeholder there is no secret)."""
    urls = [match.span() for match in _URL.finditer(text)]
    for match in _TOKEN.finditer(text):
        if any(start < match.end() and match.start() < end for start, end in urls):
            continue
        before = _before(text, match.start())
        numbered = _NUMBER_BEFORE.search(before) and not _SAME_AS_BEFORE.search(before)
        if _EXAMPLE_BEFORE.search(before) or numbered or _NAME_BEFORE.search(before):
            continue
        if _HANDLE_BEFORE.search(before) and not _PAIRED.search(match.group()):
            continue
        if _PUBLIC_ID_BEFORE.search(before) and not match.group().isdigit():
            continue
        if _PLACE_AFTER.match(text, match.end()) and re.search(r"\d", match.group()):
            continue  # "A3-215 展位", "B203 教室": a place's number
        if named_example(text, match.start(), match.end()) or _OWNER_OF_PASSWORD.match(text, match.end()):
            continue  # an example, or the account a password is for ("roll20密码忘了")
        start, value = match.start(), match.group()
        assignment = _ASSIGNED.match(value)
        if assignment:
            start, value = start + assignment.end(), value[assignment.end() :]
        if value:
            yield start, start + len(value), value


# Talk about the first digits of a bank card, which name its bank and are printed on every card of it
# ("卡号前六位622202是工行的", "卡头 625807", "BIN 号 436742"): a number of four to eight digits in it,
# starting as card numbers do, is such a prefix.
_CARD_PREFIX_TALK = compile_guarded(
    r"卡头|号段|发卡行|(?<![A-Za-z])(?:bin|iin)(?![A-Za-z])|(?<![码令])前\s*[四六八468]\s*位"
    r"|(?:卡号?|卡片)[^，。！？,!?\d]{0,4}?(?:开头|打头)",
    _I,
)
_CARD_PREFIX = compile_guarded(r"[2-6]\d{3,7}")
# ... or a prefix named so in a message about a bank or its cards ("622588 是招行一卡通的前缀", "招行卡都是 6225
# 或者 6214 开头").
_PREFIX_WORD = compile_guarded(r"前缀|前几位|头几位|开头|打头")
_BANK_WORD = compile_guarded(
    rf"银行|{BANK_SHORT_NAME}|银联|信用卡|借记卡|储蓄卡",
    _I,
)

# Talk about shares: a six-digit number in it is a stock's code ("300750宁德时代 明天能不能站上200").
_STOCK_TALK = compile_guarded(
    r"股|涨停|跌停|站上|跌破|仓位|建仓|加仓|减仓|买入|卖出|大盘|板块|k线|均线|基金|市值|开盘|收盘|主力|抄底|套牢", _I
)


#: Characters after a number read for what it is ("430000 是武汉的邮编").
_DESCRIBED_WITHIN = 10


def described(text: str, start: int, end: int) -> bool:
    """Whether the words right before or after the number at ``start:end`` say what it is (an
    amount, a unit, a floor, "430000 是武汉的邮编"): then it is no code."""
    return bool(_NUMBER_BEFORE.search(_before(text, start)) or _NUMBER_AFTER.match(text[end : end + _DESCRIBED_WITHIN]))


def _numbers(text: str) -> Iterator[re.Match[str]]:
    stocks = _STOCK_TALK.search(text) is not None
    card_prefixes = _CARD_PREFIX_TALK.search(text) is not None or bool(
        _PREFIX_WORD.search(text) and _BANK_WORD.search(text)
    )
    for match in _DIGIT_CODE.finditer(text):
        value = match.group("v").replace(" ", "")
        if stocks and len(value) == 6 and value[0] in "036":
            continue
        if card_prefixes and _CARD_PREFIX.fullmatch(value):
            continue
        before = _before(text, match.start())
        after = text[match.end() : match.end() + _DESCRIBED_WITHIN]
        blocked = described(text, match.start(), match.end()) or _EXAMPLE_BEFORE.search(before)
        # a group of a longer number written with spaces or dashes (400 800 1234, 882 331 907),
        # or the value of a command-line option (-P 3306)
        blocked = blocked or re.search(r"\d[\s\-]$|(?<![\w\-])-[A-Za-z]\s*$", before) or re.match(r"[\s\-]\d", after)
        if _SERVICE_NUMBER.match(value) or blocked:
            continue
        if (
            len(value) == 4 and re.fullmatch(r"(?:19|20)\d\d", value) and not after.startswith("#")
        ):  # a year, not a keypad code
            continue
        yield match


_OWNER_OF_PASSWORD = compile_guarded(r"\s*的?(?:密码|口令|账号|帐号|登录)")
# A password spelled out by voice: "大写K小写m八八杠2024", "小写abc下划线八八六六".
_SPELLED_PART = (
    r"(?:(?:然后|再|接着|后面|最后|加上?)?\s*(?:数字)?\s*"
    r"(?:(?:大写|小写)的?\s*(?:字母)?\s*[A-Za-z]+|(?:[两二三四]个)?[A-Za-z0-9]+|(?:[两二三四]个)?[零一二三四五六七八九幺两洞拐勾]+"
    r"|杠|横杠|下划线|点|艾特|井号|星号|感叹号|叹号))"
)
_SPELLED = compile_guarded(rf"{_SPELLED_PART}(?:[\s,、]*{_SPELLED_PART}){{2,}}")
_SPELLED_MARK = compile_guarded(r"大写|小写|下划线|杠|艾特|井号|星号|感叹号|叹号")


def _password_values(text: str) -> Iterator[Span]:
    if _PASSWORD_TALK.search(text):
        for match in _SPELLED.finditer(text):
            if _SPELLED_MARK.search(match.group()):
                yield match.span()
        checksums = bool(_NOT_SECRET_TALK.search(text))
        for start, end, value in _tokens(text):
            if checksums and re.fullmatch(r"[0-9a-f]{6,64}", value, _I):  # a commit, a digest
                continue
            if _password_like(value):
                yield start, end
    # a PIN or a numeric password: a number in a message about a password, a PIN or a lock
    if _PIN_TALK.search(text) and not PUZZLE_TALK.search(text):
        for match in _DIAL.finditer(text):  # a safe's dial
            yield match.span("v")
        for match in _numbers(text):
            value = match.group("v").replace(" ", "")
            before = text[max(0, match.start() - 8) : match.start()]
            if not _TRIVIAL_DIGITS.match(value) and not _PIN_BLOCK.search(before):
                yield match.span("v")


# A safe's dial: "左16右56左57", "左三圈到 37，右两圈到 14", "左转到二十八右转到零九" (a dial's numbers
# are said as numbers, not read out digit by digit, so they stay Chinese after ``fold``).
_DIAL_NUMBER = (
    r"(?:\d{1,2}|[零一二三四五六七八九十两]{1,3})(?![\d零一二三四五六七八九十两百千万米个次步公里号楼路条层站圈分秒点])"
)
# "左转3圈到28": the turns counted before the number the dial stops at.
_DIAL_TURNS = r"(?:[^，。！？,!?\d]{0,3}?(?:\d|[一二两三四五])圈)?"
_DIAL = compile_guarded(
    rf"(?P<v>[左右]{_DIAL_TURNS}[^，。！？,!?\d]{{0,6}}?{_DIAL_NUMBER}"
    rf"(?:[^。！？!?\d]{{0,12}}?[左右]{_DIAL_TURNS}[^，。！？,!?\d]{{0,6}}?{_DIAL_NUMBER}){{1,4}})"
)
_PASSPORT_TALK = compile_guarded(r"护照|通行证|(?<![A-Za-z])passport(?![A-Za-z])", _I)
_PASSPORT_NUMBER = compile_guarded(r"(?<![A-Za-z0-9])(?P<v>[A-Z]{1,2}\d{7,8})(?![A-Za-z0-9])")


def _passport_values(text: str) -> Iterator[Span]:
    if _PASSPORT_TALK.search(text):
        for match in _PASSPORT_NUMBER.finditer(text):
            yield match.span("v")


def _code_values(text: str) -> Iterator[Span]:
    about_codes = _CODE_TALK.search(text) or (_SMS_OR_CHECK.search(text) and _A_CODE.search(text))
    if not about_codes or _NO_CODE.search(text):
        return
    for match in _numbers(text):
        yield match.span("v")
    for match in _PREFIXED_CODE.finditer(text):
        yield match.span()
    # a code of letters and digits, in capitals, right after a code cue ("邮箱验证码 EKS28S")
    for match in re.finditer(
        r"(?:验证码|校验码|动态码|令牌码|令牌|安全令|code)(?:现在|当前|上面|上|显示|的)*\s*(?:是|为|[:：=])?\s*"
        r"(?P<v>[A-Z0-9]{4,8})(?![A-Za-z0-9])",
        text,
        _I,
    ):
        value = match.group("v")
        if any(char.isdigit() for char in value) and any(char.isalpha() for char in value) and value.isupper():
            yield match.span("v")


def _key_values(text: str) -> Iterator[Span]:
    if not _KEY_TALK.search(text) or _NOT_SECRET_TALK.search(text):
        return
    # a two-step setup key, written in groups of four (base32)
    for match in _TOTP_GROUPS.finditer(text):
        if any(char.isdigit() for char in match.group()):
            yield match.span()
    for start, end, value in _tokens(text):
        value = value.strip(".,")
        if len(value) >= 16 and not _ordinary(value) and shapes.high_entropy_key(value):
            yield start, end


def _recovery_values(text: str) -> Iterator[Span]:
    if not _RECOVERY_TALK.search(text):
        return
    codes = [
        match
        for match in _RECOVERY_CODE.finditer(text)
        if any(char.isdigit() for char in match.group()) and not _ordinary(match.group())
    ]
    if len(codes) >= 2:  # one code alone is the adjacency rules' (恢复码 R55201)
        for match in codes:
            yield match.span()


# --- seed phrases: a wallet's words, numbered or not, English or Chinese ---------------------------

_SEED_TALK = compile_guarded(r"助记词|恢复短语|恢复词|钱包|(?<![A-Za-z])(?:seed|mnemonic|recovery\s+phrase|wallet)", _I)
_SEED_WORDS = compile_guarded(
    r"(?:(?:\d{1,2}[.、)]\s*)?[a-z]{3,8}[\s,，]+){11,23}(?:\d{1,2}[.、)]\s*)?[a-z]{3,8}(?![A-Za-z])"
    r"|(?:[\u4e00-\u9fff][ \t]+){11,23}[\u4e00-\u9fff](?![\u4e00-\u9fff])"
)


def _seed_values(text: str) -> Iterator[Span]:
    if _SEED_TALK.search(text):
        for match in _SEED_WORDS.finditer(text):
            yield match.span()


def contextual_secrets(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of the values found by the message's context (``text`` is folded)."""
    for kind, rule in (
        ("password", _password_values),
        ("one_time_code", _code_values),
        ("api_key", _key_values),
        ("recovery_code", _recovery_values),
        ("seed_phrase", _seed_values),
        ("passport", _passport_values),
    ):
        for start, end in rule(text):
            yield start, end, kind
