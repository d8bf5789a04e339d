"""What an acting call will most likely do (its effect), decided before it runs (DESIGN §6).

Pure: from the tool, its arguments and what the page says on and around the element it acts on
(``tools.page.effect_facts.Facts``: label, accessible name, tooltip, icon, the form it submits and
that form's fields, the dialog or section it is in, where a link goes), in the languages agents
meet (English, German, French, Spanish, Italian, Portuguese, Dutch, Polish, Russian, Japanese,
Chinese, Korean). Consequential effects ask the person under any tool-and-site grant unless a
rule names the effect; ``routine`` is everything else. Unsure means consequential: a form that
posts for a purpose no word names is ``submit``, a button with no name at all ``unknown``.

Page text decides nothing here beyond its effect's kind, and only ever toward asking: a page
that hides what a button does behind an innocent label still has its form's card field, its
dialog's title and its link's address read.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from tabrelay.tools.catalog import Judged
from tabrelay.tools.page.effect_facts import Facts
from tabrelay.tools.results import page_text
from tabrelay.tools.targets import TargetView


class Kind(enum.StrEnum):
    MOVE_MONEY = "move_money"
    PAY = "pay"
    GRANT = "grant"
    DELETE = "delete"
    SHARE = "share"
    SEND = "send"
    ACCEPT_TERMS = "accept_terms"
    CREATE_ACCOUNT = "create_account"
    CREDENTIAL = "credential"
    DOWNLOAD = "download"
    UPLOAD = "upload"
    SUBMIT = "submit"
    UNKNOWN = "unknown"
    ROUTINE = "routine"


# Most consequential first: what a call that does several things is said to do.
ORDER = tuple(Kind)
# In capitals in the dialog: "This click will probably PLACE AN ORDER OR PAY on …".
WORDS = {
    Kind.MOVE_MONEY: "MOVE MONEY",
    Kind.PAY: "PLACE AN ORDER OR PAY",
    Kind.GRANT: "GRANT AN APP ACCESS TO THE ACCOUNT",
    Kind.DELETE: "DELETE SOMETHING",
    Kind.SHARE: "SHARE OR CHANGE WHO HAS ACCESS",
    Kind.SEND: "SEND OR PUBLISH",
    Kind.ACCEPT_TERMS: "ACCEPT TERMS",
    Kind.CREATE_ACCOUNT: "CREATE AN ACCOUNT",
    Kind.CREDENTIAL: "ENTER OR USE A CREDENTIAL",
    Kind.DOWNLOAD: "DOWNLOAD A FILE",
    Kind.UPLOAD: "UPLOAD FILES",
    Kind.SUBMIT: "SUBMIT A FORM (what it does is not clear)",
    Kind.UNKNOWN: "DO SOMETHING TABRELAY CANNOT NAME",
    Kind.ROUTINE: "do something routine",
}
# The rules' names for effects (``tabrelay policy set effect:send allow --site …``).
EFFECT_RULES: dict[str, Kind] = {f"effect:{k.value}": k for k in Kind if k is not Kind.ROUTINE}
# Effects whose standing rule the dialog never offers: only `tabrelay policy set` makes one.
NEVER_FROM_DIALOG = frozenset({Kind.PAY, Kind.MOVE_MONEY, Kind.GRANT})
RULE_PREFIX = "effect:"

# Words that name an effect, by kind; each a regular expression over text folded to lower
# case. Latin and Cyrillic words must stand alone; Japanese, Chinese and Korean ones need not.
# fmt: off
_LEXICON: dict[Kind, tuple[str, ...]] = {
    Kind.MOVE_MONEY: (
        r"transfer(?! to cart)", r"send money", r"wire( transfer)?", r"withdraw", r"überweis\w*",
        r"geld senden", r"virement", r"transf[eé]r\w*", r"bonifico", r"overmaken", r"przelew\w*",
        r"перев(ести|од)\w*", "送金", "振込", "振り込み", "转账", "汇款", "송금", "이체",
    ),
    Kind.PAY: (
        r"pay( now| with| by|\b)", r"place (your |my )?order", r"order now", r"buy( now| it)?",
        r"purchase", r"complete (your |my )?(order|purchase)",
        r"confirm (and pay|order|purchase|payment)", r"submit order", r"checkout and pay",
        r"donate", r"book now", r"subscribe and pay", r"bezahlen", r"jetzt kaufen", r"kaufen",
        r"(zahlungspflichtig|kostenpflichtig|jetzt) bestellen",
        r"bestellung (abschicken|absenden|aufgeben)", r"payer", r"acheter",
        r"(passer|valider|confirmer) (la |ma )?commande", r"commander", r"pagar", r"comprar",
        r"(realizar|confirmar|hacer|fazer) (el )?pedido", r"finalizar compra", r"paga(re)?",
        r"acquista", r"conferma (l'|l’)?ordine", r"ordina", r"betalen", r"kopen",
        r"bestelling plaatsen", r"zapłać", r"kup(uję)?", r"zamawiam", "оплатить", "купить",
        "заказать", "оформить заказ", "購入", "注文", "支払", "お支払い", "決済", "购买", "支付",
        "付款", "下单", "提交订单", "결제", "구매", "주문",
    ),
    Kind.GRANT: (
        r"authori[sz]e", r"grant access", r"allow access", r"give access", r"autorisieren",
        r"zugriff (erlauben|gewähren)", r"autoriser", r"autorizar", r"autorizza",
        r"toegang (geven|verlenen)", r"autoryzuj", "авторизовать", "разрешить доступ",
        "アクセスを許可", "授权", "允许访问", "액세스 허용", "권한 부여",
    ),
    Kind.DELETE: (
        r"delete", r"remove", r"trash", r"destroy", r"erase", r"discard", r"wipe",
        r"(close|deactivate) (my |your |the )?account", r"löschen", r"entfernen", r"supprimer",
        r"effacer", r"eliminar", r"excluir", r"borrar", r"elimina(re)?", r"cancella", r"rimuovi",
        r"verwijderen", r"wissen", r"usuń", "удалить", "削除", "消去", "删除", "移除", "삭제",
    ),
    Kind.SHARE: (
        r"share", r"invite", r"make (it |this |repository |repo )?public",
        r"change (the )?visibility", r"add (people|collaborators?|members?)", r"manage access",
        r"publish to (the )?web", r"teilen", r"freigeben", r"einladen", r"öffentlich machen",
        r"partager", r"inviter", r"rendre public", r"compartir", r"invitar", r"hacer público",
        r"condividi", r"invita", r"rendi pubblico", r"delen", r"uitnodigen", r"openbaar maken",
        r"udostępnij", r"zaproś", "поделиться", "пригласить", "сделать публичным", "共有", "招待",
        "公開する", "分享", "共享", "邀请", "公开", "공유", "초대", "공개",
    ),
    Kind.SEND: (
        r"send", r"post( (a |your )?(comment|reply|message|review))?", r"publish", r"reply",
        r"comment", r"tweet", r"submit (a |your )?(comment|review|post|message|reply)", r"senden",
        r"absenden", r"abschicken", r"veröffentlichen", r"antworten", r"posten", r"kommentieren",
        r"envoyer", r"publier", r"répondre", r"commenter", r"enviar", r"publicar", r"responder",
        r"comentar", r"invia", r"pubblica", r"rispondi", r"verzenden", r"versturen", r"plaatsen",
        r"reageren", r"wyślij", r"opublikuj", "отправить", "опубликовать", "ответить", "送信",
        "投稿", "返信", "公開", "发送", "发布", "回复", "评论", "보내기", "전송", "게시", "답장",
    ),
    Kind.ACCEPT_TERMS: (
        r"i agree", r"agree", r"accept( and continue| (the )?terms)?", r"i accept", r"zustimmen",
        r"akzeptieren", r"einverstanden", r"ich stimme zu", r"j'accepte", r"j’accepte", r"accepter",
        r"acepto", r"aceptar", r"accetto", r"accetta", r"akkoord", r"akceptuję", r"zgadzam się",
        "принимаю", "согласен", "принять", "同意", "接受", "동의",
    ),
    Kind.CREATE_ACCOUNT: (
        r"create (an |your |my |new )?account", r"sign ?up", r"register", r"join now",
        r"open (an )?account", r"konto (erstellen|eröffnen)", r"registrieren",
        r"cr[ée]er (un |mon )?compte", r"s'inscrire", r"s’inscrire", r"inscription",
        r"crear (una |mi )?cuenta", r"registrarse", r"regístrate", r"crea (un )?account",
        r"registrati", r"account aanmaken", r"registreren", r"zarejestruj( się)?", r"załóż konto",
        "зарегистрироваться", "создать аккаунт", "アカウント作成", "アカウントを作成", "新規登録",
        "会員登録", "注册", "创建账户", "创建帐户", "회원가입",
    ),
    Kind.DOWNLOAD: (
        r"download", r"export( as)?( csv| pdf| xlsx| excel)?", r"herunterladen", r"exportieren",
        r"t[ée]l[ée]charger", r"exporter", r"descargar", r"exportar", r"scarica", r"esporta",
        r"downloaden", r"exporteren", r"pobierz", r"eksportuj", "скачать", r"экспорт\w*",
        "ダウンロード", "エクスポート", "下载", "导出", "다운로드", "내보내기",
    ),
}
# Words that name something routine outright (they win over a dialog's or form's purpose: the
# "Cancel" of a "Delete repository?" dialog deletes nothing).
_ROUTINE = (
    r"cancel", r"close", r"dismiss", r"back", r"go back", r"previous", r"next( page)?",
    r"(show|load|see|view) (more|less|all)", r"more", r"expand", r"collapse", r"search",
    r"filters?", r"sort( by)?", r"menu", r"add to (cart|bag|basket|wishlist|list)", r"copy( link)?",
    r"not now", r"skip", r"later", r"no( thanks)?", r"keep", r"abbrechen", r"schließen", r"zurück",
    r"weiter", r"mehr (anzeigen|laden)", r"suchen", r"filtern", r"sortieren",
    r"in den (warenkorb|einkaufswagen)", r"link kopieren", r"annuler", r"fermer", r"retour",
    r"suivant", r"précédent", r"voir plus", r"rechercher", r"filtrer", r"trier",
    r"ajouter au panier", r"copier (le )?lien", r"cancelar", r"cerrar", r"volver", r"siguiente",
    r"próximo", r"anterior", r"ver más", r"buscar", r"filtrar", r"ordenar", r"añadir al carrito",
    r"copiar enlace", r"annulla", r"chiudi", r"indietro", r"avanti", r"aggiungi al carrello",
    r"annuleren", r"sluiten", r"terug", r"volgende", r"in winkelwagen", r"anuluj", r"zamknij",
    r"dalej", r"do koszyka", "отмена", "закрыть", "назад", "далее", "ещё", "поиск", "фильтр",
    "в корзину", "копировать ссылку", "キャンセル", "閉じる", "戻る", "次へ", "前へ", "もっと見る",
    "検索", "絞り込み", "並べ替え", "カートに入れる", "リンクをコピー", "取消", "关闭", "返回",
    "下一页", "上一页", "更多", "搜索", "筛选", "排序", "加入购物车", "复制链接", "취소", "닫기",
    "뒤로", "다음", "이전", "더 보기", "검색", "필터", "정렬", "장바구니", "링크 복사",
)
# Labels that only confirm what their dialog, section or form is about.
_CONFIRM = (
    r"ok(ay)?", r"yes", r"confirm", r"continue", r"proceed", r"submit", r"done", r"apply",
    r"i understand", r"i understand[,.]? .*", r"got it", r"ja", r"bestätigen", r"fortfahren",
    r"oui", r"confirmer", r"continuer", r"valider", r"sí", r"si", r"confirmar", r"continuar", r"sì",
    r"conferma", r"continua", r"bevestigen", r"doorgaan", r"tak", r"potwierdź", "да", "подтвердить",
    "продолжить", "はい", "確認", "続行", "确定", "确认", "继续", "是", "확인", "계속",
)
# What makes a "continue" or an "allow" grant an app access, or an "accept" only about cookies.
_CONSENT = (
    r"access to your", r"wants? to access", r"would like to", r"permissions?", r"oauth",
    r"authori[sz]", r"scopes?", r"on your behalf", r"zugriff", r"möchte", r"accès", r"souhaite",
    r"acceso", r"quiere", r"accesso", r"toegang", r"dostęp", "доступ", "アクセス", "访问", "권한",
)
_ALLOW = (
    r"allow", r"approve", r"accept", r"grant", r"consent", r"continue", r"erlauben", r"zulassen",
    r"autoriser", r"permitir", r"consenti", r"toestaan", r"zezwól", "разрешить", "許可", "允许",
    "허용",
)
# fmt: on
_COOKIES = (r"cookies?", r"tracking", r"privacy settings", "クッキー", "쿠키")
_PRICE = re.compile(r"[$€£¥₩₹]\s?\d|\d[\d.,]*\s?(€|eur|usd|gbp|円|元|₽|zł|kr)\b")
_FILE = re.compile(
    r"\.(csv|pdf|zip|gz|tgz|tar|7z|rar|xlsx?|docx?|pptx?|odt|ods|exe|dmg|msi|pkg|deb|rpm|apk|"
    r"iso|ics|vcf|mp4|mp3)(\?|#|$)",
    re.IGNORECASE,
)
_ICON_KINDS = {
    Kind.DELETE: r"trash|bin|delete|remove|garbage|waste",
    Kind.SEND: r"send|paper ?plane",
    Kind.SHARE: r"share",
    Kind.DOWNLOAD: r"download",
}
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _compile(phrases: Iterable[str]) -> re.Pattern[str]:
    parts = [p if _CJK.search(p) else rf"(?<![\w'’]){p}(?![\w])" for p in phrases]
    return re.compile("|".join(f"(?:{p})" for p in parts))


_PATTERNS = {kind: _compile(phrases) for kind, phrases in _LEXICON.items()}
_ROUTINE_PATTERN = _compile(_ROUTINE)
_CONFIRM_WHOLE = re.compile(rf"^(?:{'|'.join(_CONFIRM)})[.!…]*$")
_CONSENT_PATTERN = _compile(_CONSENT)
_ALLOW_PATTERN = _compile(_ALLOW)
_COOKIE_PATTERN = _compile(_COOKIES)
_ICON_PATTERNS = {
    kind: re.compile(rf"(?<![a-z])({words})(?![a-z])") for kind, words in _ICON_KINDS.items()
}


@dataclass(frozen=True, slots=True)
class Effect:
    """A call's most likely effect, and why Tabrelay thinks so (in words for the person)."""

    kind: Kind
    why: str = ""
    certain: bool = False  # seen happening (a download that began), not foreseen

    @property
    def consequential(self) -> bool:
        return self.kind is not Kind.ROUTINE

    @property
    def rule_name(self) -> str:
        """The rule that names it: ``tabrelay policy set effect:send allow --site …``."""
        return f"{RULE_PREFIX}{self.kind.value}"

    def sentence(self, action: str, site: str | None) -> str:
        """``This click will probably PLACE AN ORDER OR PAY on shop.example: button "Place
        order" in a form with a card number field``."""
        where = f" on {site}" if site else ""
        because = f": {self.why}" if self.why else ""
        likely = "will" if self.certain else "will probably"
        return f"This {action} {likely} {WORDS[self.kind]}{where}{because}"


ROUTINE = Effect(Kind.ROUTINE)


def fold(text: str) -> str:
    return " ".join(text.casefold().split())


def named_kind(text: str) -> Kind | None:
    """The most consequential effect ``text`` names, or None."""
    folded = fold(text)
    if not folded:
        return None
    for kind in ORDER:
        pattern = _PATTERNS.get(kind)
        if pattern is not None and pattern.search(folded):
            return kind
    return None


def most(effects: Iterable[Effect]) -> Effect:
    """The most consequential of several effects (a form's fields, a recipe's steps)."""
    return min(effects, key=lambda e: ORDER.index(e.kind), default=ROUTINE)


def parse_rule_kind(tool: str) -> Kind | None:
    """The effect a rule's tool names (``effect:send``), or None for a tool's rule."""
    if not tool.startswith(RULE_PREFIX):
        return None
    try:
        return Kind(tool.removeprefix(RULE_PREFIX))
    except ValueError:
        return None


# --- deciding ---------------------------------------------------------------------------------


def of_click(facts: Facts | None) -> Effect:
    """What clicking the element most likely does."""
    if facts is None:
        return Effect(Kind.UNKNOWN, "the element could not be read")
    said = _said(facts)
    own = _own(facts)
    if facts.form is not None and facts.form.submits:
        return _submitting(facts, own if own is not None else said)
    if own is not None:
        return own
    context = _context(facts, said)
    if context is not None:
        return context
    if facts.href is not None and (facts.download or _FILE.search(facts.href)):
        return Effect(
            Kind.DOWNLOAD, f"{_what(facts)} links to a file ({page_text(_short(facts.href, 80))})"
        )
    if not said and not facts.icon and _is_button(facts):
        return Effect(Kind.UNKNOWN, f"{_word(facts.tag)} with no name, text or icon")
    return ROUTINE


def of_typing(facts: Facts | None, *, submit: bool) -> Effect:
    """What typing into the field does (``submit``: Enter is pressed after)."""
    typed = ROUTINE
    if facts is not None and facts.purpose in ("password", "new_password", "otp", "card", "iban"):
        typed = Effect(Kind.CREDENTIAL, f"{_what(facts)} is a {_PURPOSES[facts.purpose]} field")
    return most((typed, of_enter(facts))) if submit else typed


def of_enter(facts: Facts | None) -> Effect:
    """What Enter in the element does: submits its form, sends from a composer, or nothing."""
    if facts is None:
        return Effect(Kind.UNKNOWN, "the focused element could not be read")
    composer = facts.field and facts.tag not in ("input", "select")  # a textarea, an editor
    if facts.form is not None and facts.form.enter and facts.field and not composer:
        return _submitting(facts, facts.form.button)
    if composer:
        beside = named_kind(facts.beside)
        if beside in (Kind.SEND, Kind.SHARE, Kind.PAY) or (facts.beside and beside is None):
            kind = beside or Kind.SEND
            return Effect(
                kind,
                f"{_what(facts)} is a message box beside “{page_text(_short(facts.beside, 60))}”",
            )
    return ROUTINE


def of_dialog_answer(message: str, *, accept: bool) -> Effect:
    """Answering the page's own alert, confirm or prompt."""
    kind = named_kind(message)
    if not accept or kind is None:
        return ROUTINE
    return Effect(kind, f"it accepts the page's question “{page_text(_short(message, 100))}”")


def of_choice(facts: Facts | None, chosen: Sequence[str]) -> Effect:
    """Choosing options of a select (visibility "Public" shares)."""
    words = " ".join(chosen)
    if re.search(
        r"(?<![\w])(public|anyone|everyone|öffentlich|public|público|pubblico|公開|公开|공개)(?![\w])",
        fold(words),
    ):
        return Effect(
            Kind.SHARE,
            f"it chooses “{page_text(_short(words, 60))}” in {_what(facts) if facts else 'a list'}",
        )
    return ROUTINE


def decide(
    judged: Judged,
    params: BaseModel,
    targets: Sequence[TargetView],
    *,
    dialog: str | None = None,
    recipe: Sequence[str | None] | None = None,
) -> Effect:
    """The effect of one call with ``params``, of a tool judged as ``judged`` (its spec's), on
    the elements ``targets`` describe (``tools.targets``: the facts of each, by argument path);
    ``dialog`` is the message of the page's alert, confirm or prompt open on the tab; ``recipe``
    what each step of the recipe a replay runs was judged to do when recorded (None: routine)."""
    facts = {t.path: t.facts for t in targets}
    first = facts.get("ref", facts.get("selector"))
    if judged == "click":
        return of_click(first)
    if judged == "typing":
        return of_typing(first, submit=bool(getattr(params, "submit", False)))
    if judged == "filling":
        return most(
            of_typing(f, submit=False) for path, f in facts.items() if path.startswith("fields.")
        )
    if judged == "choice":
        return of_choice(first, [str(v) for v in getattr(params, "values", [])])
    if judged == "key":
        return of_key(
            str(getattr(params, "key", "")), first if first is not None else facts.get("focused")
        )
    if judged == "dialog":
        return of_dialog_answer(dialog or "", accept=bool(getattr(params, "accept", False)))
    if judged == "upload":
        return Effect(Kind.UPLOAD, "it puts files from this computer into the page")
    # Code (browser_evaluate, browser_cdp) is judged as "nothing": it is its own effect, a rule
    # allowing it on a site is the person's consent to running code there, and without one it
    # always asks.
    if judged == "recipe":
        return of_recipe(recipe)
    if judged == "page_tool":
        # Whatever its name, description or hints say (the page's words): the page's own code.
        name = page_text(str(getattr(params, "name", ""))[:100])
        return Effect(Kind.UNKNOWN, f"it runs the page's own tool {name}, whatever it does")
    return ROUTINE


def of_recipe(steps: Sequence[str | None] | None) -> Effect:
    """Replaying a recipe does what its most consequential step was judged to do; a recipe that
    cannot be read, or a step nobody judged (a person's own), is unsure."""
    if steps is None:
        return Effect(Kind.UNKNOWN, "the recipe could not be read")
    judged = []
    for index, step in enumerate(steps, start=1):
        if step is None:
            continue
        kind = Kind(step) if step in _KINDS else Kind.UNKNOWN
        judged.append(Effect(kind, f"the recipe's step {index} was judged so when recorded"))
    return most(judged)


_KINDS = frozenset(k.value for k in Kind)


def of_key(key: str, facts: Facts | None) -> Effect:
    """Pressing ``key`` (a combination) where it goes: Enter submits or sends, Enter or Space
    on a button clicks it; other keys move, select or type."""
    pressed = key.rsplit("+", 1)[-1].strip().casefold()
    if pressed not in ("enter", "return", "space", " "):
        return ROUTINE
    if facts is not None and not facts.field:
        return of_click(facts)
    if pressed in ("space", " "):
        return ROUTINE
    return of_enter(facts)


# --- parts ------------------------------------------------------------------------------------


_PURPOSES = {
    "password": "password",
    "new_password": "new password",
    "otp": "one-time code",
    "card": "card number",
    "iban": "bank account (IBAN)",
    "amount": "amount",
    "email": "email",
}


def _said(facts: Facts) -> str:
    return " ".join(t for t in (facts.label, facts.name, facts.title) if t)


def _own(facts: Facts) -> Effect | None:
    """What the element's own words (label, name, tooltip, icon) say it does, or None when
    they only confirm (OK, Continue) or say nothing."""
    said = _said(facts)
    folded = fold(said)
    kind = named_kind(said)
    if kind in (Kind.ACCEPT_TERMS, None) and _ALLOW_PATTERN.search(folded):
        context = fold(" ".join((facts.dialog, facts.section, said)))
        if _COOKIE_PATTERN.search(context):
            return Effect(Kind.ROUTINE, f"{_what(facts)} is about cookies")
        if _CONSENT_PATTERN.search(context) or (
            kind is None and re.search(r"allow|erlauben|autoriser|permitir|許可|허용", folded)
        ):
            return Effect(Kind.GRANT, f"{_what(facts)}{_in(facts)}")
    if kind is not None:
        return Effect(kind, f"{_what(facts)}{_in(facts)}")
    if _PRICE.search(folded) and _is_button(facts):
        return Effect(Kind.PAY, f"{_what(facts)} shows a price")
    if folded and _ROUTINE_PATTERN.search(folded) and not _CONFIRM_WHOLE.match(folded):
        return ROUTINE
    if not folded:
        for icon_kind, pattern in _ICON_PATTERNS.items():
            if pattern.search(facts.icon.casefold()):
                icon = page_text(_short(facts.icon, 40))
                return Effect(icon_kind, f"{_word(facts.tag)} whose icon is “{icon}”")
    return None


def _context(facts: Facts, said: str) -> Effect | None:
    """A confirming label takes its dialog's or section's purpose."""
    folded = fold(said)
    if folded and not _CONFIRM_WHOLE.match(folded):
        return None
    for where, text in (("dialog", facts.dialog), ("section", facts.section)):
        kind = named_kind(text)
        if kind is not None:
            return Effect(kind, f"{_what(facts)} in a {where} “{page_text(_short(text, 60))}”")
        if text and _CONSENT_PATTERN.search(fold(text)):
            return Effect(
                Kind.GRANT, f"{_what(facts)} in a {where} “{page_text(_short(text, 60))}”"
            )
    return None


def _submitting(facts: Facts, label: str | Effect | None) -> Effect:
    """Submitting the element's form: its fields, then its button's words, then its method."""
    form = facts.form
    assert form is not None
    fields = set(form.fields)
    with_fields = f"a form with {_fields(fields)}" if fields else "a form"
    own = label if isinstance(label, Effect) else None
    words = label if isinstance(label, str) else _said(facts)
    kind = own.kind if own is not None else named_kind(words)
    subject = (
        _what(facts)
        if facts.form is not None and facts.form.submits
        else f"Enter in {_what(facts)}"
    )
    if "card" in fields:
        return Effect(
            most((Effect(Kind.PAY), Effect(kind or Kind.PAY))).kind, f"{subject} in {with_fields}"
        )
    if "iban" in fields:
        return Effect(Kind.MOVE_MONEY, f"{subject} in {with_fields}")
    if kind is not None and kind is not Kind.ROUTINE:
        return Effect(kind, f"{subject} in {with_fields}")
    if fields & {"password", "otp"}:  # signing in, or changing a password
        return Effect(Kind.CREDENTIAL, f"{subject} in {with_fields}")
    if "new_password" in fields:
        return Effect(Kind.CREATE_ACCOUNT, f"{subject} in {with_fields}")
    if own is not None and own.kind is Kind.ROUTINE:
        return ROUTINE
    if words and _ROUTINE_PATTERN.search(fold(words)) and not _CONFIRM_WHOLE.match(fold(words)):
        return ROUTINE
    context = _context(facts, words)
    if context is not None:
        return context
    if form.method == "get" or "search" in fields:
        return ROUTINE
    return Effect(
        Kind.SUBMIT, f"{subject} posts {with_fields} to {page_text(_short(form.action, 80))}"
    )


def _fields(fields: set[str]) -> str:
    named = [f"{_PURPOSES[f]} field" for f in sorted(fields) if f in _PURPOSES]
    return ", ".join(named) if named else "fields"


def _word(written: str | None) -> str:
    """A tag or role as the page wrote it, if it is one word of a tag's letters (the page
    writes it: ``role="ignore the above"`` is no role), else "element"."""
    return written if written and _WORD.fullmatch(written) else "element"


_WORD = re.compile(r"[a-z][a-z0-9-]{0,29}")


def _what(facts: Facts) -> str:
    role = (
        _word(facts.role)
        if facts.role
        else {
            "a": "link",
            "button": "button",
            "input": "field",
            "textarea": "text box",
        }.get(facts.tag, _word(facts.tag))
    )
    if facts.tag == "input" and facts.type in ("submit", "button", "image", "reset"):
        role = "button"
    label = facts.label or facts.name or facts.title
    return f"{role} “{page_text(_short(label, 60))}”" if label else f"an unnamed {role}"


def _in(facts: Facts) -> str:
    if facts.dialog:
        return f" in a dialog “{page_text(_short(facts.dialog, 60))}”"
    return ""


def _is_button(facts: Facts) -> bool:
    return (
        facts.tag == "button"
        or facts.role in ("button", "menuitem", "link")
        or (facts.tag == "input" and facts.type in ("submit", "button", "image"))
    )


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
