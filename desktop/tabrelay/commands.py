"""The command line's administrative commands: token, pair, client, policy, log, doctor.

Each handler takes the parsed arguments and the paths, prints for a person, and returns the exit
code; errors are raised as ``TabrelayError`` (``UsageError`` for bad arguments) and ``cli.main``
turns them into one line on stderr. State changes go through the settings file and the secret
store, which a running app watches, so they take effect without a restart.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import sys
import time

from tabrelay.approval.effects import EFFECT_RULES
from tabrelay.approval.policy import describe_rule, normalize_origin
from tabrelay.config.files import private_opener
from tabrelay.config.mcp_clients import ClientTokens
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import KeychainUnavailable, TokenStore
from tabrelay.config.settings import (
    EXTENSION_ID,
    PAIRING_ID,
    PolicyRule,
    Settings,
    SettingsStore,
)
from tabrelay.endpoint import MCP_PATH
from tabrelay.errors import ConfigError, TabrelayError, UsageError
from tabrelay.protocol.constants import TABRELAY_EXTENSION_ID
from tabrelay.relay.pairing import PAIRING_CODE, Pairing
from tabrelay.store.commandlog import CommandEntry, CommandLog
from tabrelay.system.clients import CLIENTS, Endpoint, merge_into_config
from tabrelay.system.doctor import Doctor, running_instance
from tabrelay.system.launcher import tabrelay_command
from tabrelay.tools.catalog import BY_NAME
from tabrelay.tools.state.guard import origin_of

# --- token ----------------------------------------------------------------------------------


def token_show(args: argparse.Namespace, paths: Paths) -> int:
    raise TabrelayError(
        "there is no shared relay token any more: each paired browser has a credential of its "
        "own (`tabrelay pair list`). To pair a browser by hand, run `tabrelay pair add` and "
        "paste what it prints into the extension's options."
    )


def token_rotate(args: argparse.Namespace, paths: Paths) -> int:
    removed = _pairing(paths).revoke_all()
    print(
        f"Every browser credential was replaced ({len(removed)} paired browser"
        f"{'' if len(removed) == 1 else 's'}): connected browsers disconnect now and ask to "
        "pair again; approve them in the tray, or allow each with `tabrelay pair allow ID`."
    )
    return 0


# --- secrets --------------------------------------------------------------------------------


def open_tokens(paths: Paths) -> TokenStore:
    """The secret store as every process shares it, saying so when the keychain makes us wait
    (a password prompt may be open); a locked or silent keychain raises its problem."""
    tokens = TokenStore.open(paths, on_wait=say_waiting)
    if tokens.problem is not None:
        raise tokens.problem
    for problem in tokens.all_problems():
        print(f"tabrelay: {problem}", file=sys.stderr)
    return tokens


def say_waiting(waiting: bool) -> None:
    if waiting:
        print(
            "tabrelay: waiting for your keychain (a password prompt may be open)…",
            file=sys.stderr,
            flush=True,
        )


def secrets_where(args: argparse.Namespace, paths: Paths) -> int:
    """Where secrets live, and whether they can be read now. It looks without opening the
    keychain's unlock prompt where the keychain can tell it is locked."""
    tokens = TokenStore.open(paths, on_wait=say_waiting)
    problem = tokens.problem and tokens.problem.message
    if problem is None and tokens.locked_now():
        problem = "your keychain is locked (reading Tabrelay's secrets asks for its password)"
    elif problem is None and tokens.place is not None:
        with contextlib.suppress(KeychainUnavailable):  # a read finds a locked keychain
            tokens.client_token("where")
        problem = tokens.problem and tokens.problem.message
    print(f"Secrets live in: {tokens.description}")
    if problem is not None:
        print(f"Problem: {problem}. {KEYCHAIN_HINT}")
        return 1
    return 0


def secrets_use(args: argparse.Namespace, paths: Paths) -> int:
    tokens = TokenStore.open(paths, on_wait=say_waiting)
    if tokens.place == args.place and tokens.problem is None:
        print(f"Secrets already live in: {tokens.description}")
        return 0
    forgotten = tokens.move_to(args.place, forget_unreadable=args.forget_unreadable)
    print(f"Secrets now live in: {tokens.description}; nothing is left where they were.")
    if forgotten:
        print(
            "The keychain could not be read, so these were given up: "
            f"{', '.join(forgotten)}. Browsers ask to pair again by themselves; make new client "
            "tokens with `tabrelay client add`."
        )
    return 0


KEYCHAIN_HINT = (
    "Unlock your keychain and run this again, or keep Tabrelay's secrets in a file only you "
    "can read: `tabrelay secrets use file` (add --forget-unreadable if the keychain stays "
    "locked: browsers then pair again and clients need new tokens)."
)


# --- pair -----------------------------------------------------------------------------------


def pair_list(args: argparse.Namespace, paths: Paths) -> int:
    settings = SettingsStore(paths.settings_file).load()
    if not settings.pairings:
        print("No browser is paired. Open the Tabrelay extension's popup to pair it.")
    for paired in settings.pairings:
        label = f"  {paired.label}" if paired.label else ""
        print(f"{paired.id}  {paired.extension_id}{label}  paired {when(paired.paired_at)}")
    now = time.time()
    for grant in settings.pairing_grants:
        if grant.expires_at > now:
            print(f"(allowed to pair until {when(grant.expires_at)}: {grant.extension_id})")
    return 0


def pair_allow(args: argparse.Namespace, paths: Paths) -> int:
    extension_id = _extension_id(args.extension_id)
    if args.minutes <= 0 or args.minutes > 24 * 60:
        raise UsageError("--minutes must be more than 0 and at most 1440")
    code = args.code.strip().upper() if args.code else None
    if code is not None and not PAIRING_CODE.fullmatch(code):
        raise UsageError(
            f"{args.code!r} is not a pairing code (the six characters the popup shows)"
        )
    _pairing(paths).grant(extension_id, minutes=args.minutes, code=code)
    which = f"showing the code {code}" if code else "(any request in its name: see --code)"
    print(
        f"chrome-extension://{extension_id} may pair once within {args.minutes:g} minutes, "
        f"{which}: open the extension's popup (or wait, it asks by itself). Check with "
        "`tabrelay pair list`."
    )
    return 0


def pair_add(args: argparse.Namespace, paths: Paths) -> int:
    extension_id = _extension_id(args.extension_id or TABRELAY_EXTENSION_ID)
    paired, token = _pairing(paths).add(extension_id)
    print(
        f"Paired a browser of chrome-extension://{extension_id} as {paired.id}. Its credential "
        f"(shown only now) — paste it in the extension's options, under Pair by hand:\n\n"
        f"  {token}\n"
    )
    return 0


def pair_revoke(args: argparse.Namespace, paths: Paths) -> int:
    key = args.pairing.strip().removeprefix("chrome-extension://").rstrip("/")
    if not (EXTENSION_ID.match(key) or PAIRING_ID.match(key)):
        raise UsageError(f"{args.pairing!r} is neither a pairing id nor an extension id")
    removed = _pairing(paths).revoke(key)
    if not removed:
        raise TabrelayError(f"nothing is paired as {key} (see `tabrelay pair list`)")
    names = ", ".join(p.id for p in removed)
    print(f"Unpaired {names}; their credentials stopped working and they are disconnected")
    return 0


def _pairing(paths: Paths) -> Pairing:
    return Pairing(SettingsStore(paths.settings_file), open_tokens(paths))


def _extension_id(raw: str) -> str:
    value = raw.strip().removeprefix("chrome-extension://").rstrip("/")
    if not EXTENSION_ID.match(value):
        raise UsageError(f"{raw!r} is not an extension id (32 letters a-p)")
    return value


# --- client ---------------------------------------------------------------------------------


def client_add(args: argparse.Namespace, paths: Paths) -> int:
    new = _clients(paths).add(args.name)
    endpoint = Endpoint(
        url=mcp_url(paths),
        token=new.token,
        client=new.name,
        command=tuple(tabrelay_command()),
        approval_timeout=SettingsStore(paths.settings_file).load().approval_timeout,
    )
    print(f"Created MCP client {new.name!r}. Its token (shown only now):\n\n  {new.token}\n")
    if args.to is None:
        print("Connect it with one of these (Claude Desktop and Codex use the stdio bridge):")
        for kind in CLIENTS.values():
            print(f"\n## {kind.label}\n{kind.snippet(endpoint)}")
        return 0
    kind = CLIENTS[args.to]
    try:
        merged = merge_into_config(kind, endpoint)
    except ConfigError as exc:  # the client exists; the file is as it was
        print(f"tabrelay: {exc}", file=sys.stderr)
        print(f"The snippet for {kind.label}:\n{kind.snippet(endpoint)}")
        return 1
    if not merged.changed:
        print(f"{merged.path} already holds this entry.")
    else:
        kept = f" (the file before: {merged.backup})" if merged.backup else ""
        print(f"Added Tabrelay to {kind.label}'s {merged.path}{kept}.")
    for note in merged.notes:
        print(note)
    print(f"Restart {kind.label} (or reload its MCP servers) to use it.")
    return 0


def client_list(args: argparse.Namespace, paths: Paths) -> int:
    clients = _clients(paths).names()
    if not clients:
        print("No MCP client yet. Create one with `tabrelay client add NAME`.")
    for client in clients:
        print(f"{client.name}  created {when(client.created_at)}")
    return 0


def client_revoke(args: argparse.Namespace, paths: Paths) -> int:
    _clients(paths).revoke(args.name)
    print(f"Revoked {args.name!r}: its token no longer works, and its rules are gone.")
    return 0


def _clients(paths: Paths) -> ClientTokens:
    return ClientTokens(SettingsStore(paths.settings_file), open_tokens(paths))


def running_mcp_port(paths: Paths) -> int | None:
    """The running app's MCP port, or ``None`` when no app answers."""
    instance = running_instance(paths)
    port = instance.get("mcp_port") if instance else None
    return port if isinstance(port, int) and port else None


def mcp_url(paths: Paths) -> str:
    """The running app's MCP URL, else the configured one."""
    port = running_mcp_port(paths)
    if port is None:
        port = SettingsStore(paths.settings_file).load().mcp_port
    return f"http://127.0.0.1:{port}{MCP_PATH}"


# --- policy ---------------------------------------------------------------------------------


def policy_list(args: argparse.Namespace, paths: Paths) -> int:
    rules = SettingsStore(paths.settings_file).load().policy_rules
    print(
        "Defaults: read-only tools are allowed, every other tool asks; a consequential effect "
        "(effect:pay, effect:send, …) asks unless a rule names it."
    )
    if not rules:
        print("No rules.")
    now = time.time()
    for number, rule in enumerate(rules, 1):
        expired = " (expired)" if rule.expires_at is not None and rule.expires_at <= now else ""
        print(f"{number}. {describe_rule(rule)}{expired}")
    return 0


def policy_set(args: argparse.Namespace, paths: Paths) -> int:
    if args.tool != "*" and args.tool not in BY_NAME and args.tool not in EFFECT_RULES:
        known = ", ".join(sorted(BY_NAME))
        effects = ", ".join(EFFECT_RULES)
        raise UsageError(
            f"unknown tool {args.tool!r}; use * or one of: {known}; or an effect: {effects}"
        )
    site = None
    if args.site:
        site = origin_of(args.site if "://" in args.site else f"https://{args.site}")
        if site is None:
            raise UsageError(f"{args.site!r} is not a site (e.g. https://example.com)")
        site = normalize_origin(site)
    if args.hours is not None and args.hours <= 0:
        raise UsageError("--hours must be more than 0")
    rule = PolicyRule(
        tool=args.tool,
        decision=args.decision,
        site=site,
        client=args.client,
        expires_at=time.time() + args.hours * 3600 if args.hours else None,
    )

    def replace(settings: Settings) -> None:
        settings.policy_rules = [
            r
            for r in settings.policy_rules
            if (r.tool, r.site, r.client) != (rule.tool, rule.site, rule.client)
        ]
        settings.policy_rules.append(rule)

    SettingsStore(paths.settings_file).update(replace)
    print(f"Rule set: {describe_rule(rule)}")
    return 0


def policy_reset(args: argparse.Namespace, paths: Paths) -> int:
    SettingsStore(paths.settings_file).update(lambda s: s.policy_rules.clear())
    print("Every rule removed: read-only tools are allowed, every other tool asks.")
    return 0


# --- log ------------------------------------------------------------------------------------


def log_tail(args: argparse.Namespace, paths: Paths) -> int:
    if args.n < 1:
        raise UsageError("-n must be at least 1")
    log = CommandLog(paths.command_log_file)
    try:
        rows = list(reversed(log.recent(args.n)))
        for entry in rows:
            print(_line(entry))
        last = rows[-1].id if rows and rows[-1].id else 0
        while args.follow:
            time.sleep(0.5)
            for entry in log.since(last):
                print(_line(entry), flush=True)
                last = entry.id or last
    except KeyboardInterrupt:
        pass
    finally:
        log.close()
    return 0


def log_export(args: argparse.Namespace, paths: Paths) -> int:
    log = CommandLog(paths.command_log_file)
    try:
        if args.output:
            # Private like the log itself (0600), even over a file others could read.
            with open(
                args.output, "w", encoding="utf-8", newline="", opener=private_opener
            ) as handle:
                handle.writelines(log.export(args.format))
            print(f"Exported {log.count()} calls to {args.output}")
        else:
            sys.stdout.writelines(log.export(args.format))
    except OSError as exc:
        raise TabrelayError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    finally:
        log.close()
    return 0


def _line(entry: CommandEntry) -> str:
    when = datetime.datetime.fromtimestamp(entry.time).strftime("%Y-%m-%d %H:%M:%S")
    where = f" tab {entry.tab_id} {entry.origin or ''}".rstrip() if entry.tab_id is not None else ""
    outcome = entry.status if not entry.error else f"{entry.status}: {entry.error}"
    touches = f"  → {entry.targets}" if entry.targets else ""
    return (
        f"{when}  {entry.client:<14} {entry.tool:<22}{where}  {entry.arguments}{touches}  "
        f"[{entry.decision}] {outcome} {entry.duration_ms:.0f} ms {entry.result_bytes} B"
    )


# --- doctor ---------------------------------------------------------------------------------


def doctor(args: argparse.Namespace, paths: Paths) -> int:
    checks = Doctor(
        paths, open_tokens=lambda p: TokenStore.open(p, on_wait=say_waiting, decide=False)
    ).run()
    marks = {"ok": "ok  ", "info": "info", "warn": "WARN", "fail": "FAIL"}
    for check in checks:
        print(f"[{marks[check.status]}] {check.name}: {check.detail}")
        if check.fix:
            print(f"       fix: {check.fix}")
    return 1 if any(c.status == "fail" for c in checks) else 0


def when(timestamp: float) -> str:
    """A time as the commands print it."""
    return datetime.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")
