"""The ``tabrelay`` command line (DESIGN §12), and the composition root of the headless app.

Exit codes: 0 success, 2 usage error, 1 anything else, each failure with one clear line on
stderr. Commands that change state write the settings file or the secret store; a running
app notices within a fraction of a second (``core.py`` watches), so no restart is needed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import logging
import signal
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from tabrelay import __version__
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import TokenStore
from tabrelay.config.settings import EXTENSION_ID, Settings, SettingsStore
from tabrelay.core import Core, CoreOptions
from tabrelay.errors import TabrelayError, UsageError
from tabrelay.protocol.constants import RELAY_PATH
from tabrelay.relay.pairing import Pairing
from tabrelay.system.doctor import Doctor
from tabrelay.system.logs import Redactor, setup_logging

logger = logging.getLogger(__name__)

Handler = Callable[[argparse.Namespace, Paths], int]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tabrelay",
        description="Let AI agents use your open browser, with you in control.",
    )
    parser.add_argument("--version", action="version", version=f"tabrelay {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the core headless (no tray)")
    serve.add_argument("--relay-port", type=_port, metavar="N", help="relay port (default 23001)")
    serve.add_argument("--mcp-port", type=_port, metavar="N", help="MCP port (default 23002)")
    serve.add_argument("--verbose", "-v", action="store_true", help="log at DEBUG level")
    serve.set_defaults(handler=_serve)

    token = commands.add_parser("token", help="the relay token").add_subparsers(
        dest="action", metavar="ACTION", required=True
    )
    token.add_parser("show", help="print the relay token (for manual pairing)").set_defaults(
        handler=_token_show
    )
    token.add_parser("rotate", help="replace the relay token").set_defaults(handler=_token_rotate)

    pair = commands.add_parser("pair", help="paired browser extensions").add_subparsers(
        dest="action", metavar="ACTION", required=True
    )
    pair.add_parser("list", help="list paired extension ids").set_defaults(handler=_pair_list)
    allow = pair.add_parser("allow", help="pair an extension id")
    allow.add_argument("extension_id", metavar="EXTENSION_ID")
    allow.set_defaults(handler=_pair_allow)
    revoke = pair.add_parser("revoke", help="unpair an extension id (disconnects it)")
    revoke.add_argument("extension_id", metavar="EXTENSION_ID")
    revoke.set_defaults(handler=_pair_revoke)

    commands.add_parser(
        "doctor", help="check what works and how to fix what does not"
    ).set_defaults(handler=_doctor)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler: Handler = getattr(args, "handler", _serve)
    if args.command is None:
        args.relay_port = args.mcp_port = None
        args.verbose = False
    try:
        return handler(args, Paths.resolve())
    except UsageError as exc:
        print(f"tabrelay: error: {exc.message}", file=sys.stderr)
        return 2
    except TabrelayError as exc:
        print(f"tabrelay: {exc.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    # The outermost boundary: whatever escaped becomes one line, with the details in the log.
    except Exception as exc:
        logger.debug("unexpected error", exc_info=True)
        print(f"tabrelay: unexpected error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


# --- serve ----------------------------------------------------------------------------------


def _serve(args: argparse.Namespace, paths: Paths) -> int:
    redactor = Redactor()
    setup_logging(
        redactor, log_file=paths.log_file, level=logging.DEBUG if args.verbose else logging.INFO
    )
    return asyncio.run(_run_headless(args, paths, redactor))


async def _run_headless(args: argparse.Namespace, paths: Paths, redactor: Redactor) -> int:
    tokens = await asyncio.to_thread(TokenStore.open, paths)
    for problem in tokens.all_problems():
        logger.warning("%s", problem)
    core = Core(
        paths,
        tokens,
        redactor=redactor,
        options=CoreOptions(relay_port=args.relay_port, mcp_port=args.mcp_port),
    )
    await core.start()
    assert core.relay is not None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):  # Windows: Ctrl+C raises instead
            loop.add_signal_handler(sig, stop.set)
    print(
        f"tabrelay: serving relay on ws://{core.relay.host}:{core.relay.port}{RELAY_PATH} "
        "(Ctrl+C to stop)",
        file=sys.stderr,
        flush=True,
    )
    try:
        await stop.wait()
    finally:
        await core.stop()
    return 0


# --- token ----------------------------------------------------------------------------------


def _token_show(args: argparse.Namespace, paths: Paths) -> int:
    print(TokenStore.open(paths).relay_token())
    return 0


def _token_rotate(args: argparse.Namespace, paths: Paths) -> int:
    TokenStore.open(paths).rotate_relay_token()
    _bump_secrets_revision(paths)
    print(
        "Relay token rotated. Paired extensions reconnect with the new one; an extension "
        "paired by hand needs the new token pasted into its options."
    )
    return 0


def _bump_secrets_revision(paths: Paths) -> None:
    """Tell a running app that a secret changed (it watches the settings file)."""

    def bump(settings: Settings) -> None:
        settings.secrets_revision += 1

    SettingsStore(paths.settings_file).update(bump)


# --- pair -----------------------------------------------------------------------------------


def _pair_list(args: argparse.Namespace, paths: Paths) -> int:
    store = SettingsStore(paths.settings_file)
    settings = store.load()
    if not settings.paired_extensions:
        print("No extension is paired. Open the Tabrelay extension's popup to pair it.")
    for paired in settings.paired_extensions:
        print(f"{paired.id}  paired {_when(paired.paired_at)}")
    return 0


def _pair_allow(args: argparse.Namespace, paths: Paths) -> int:
    extension_id = _extension_id(args.extension_id)
    Pairing(SettingsStore(paths.settings_file)).allow(extension_id)
    print(f"Paired chrome-extension://{extension_id}")
    return 0


def _pair_revoke(args: argparse.Namespace, paths: Paths) -> int:
    extension_id = _extension_id(args.extension_id)
    if not Pairing(SettingsStore(paths.settings_file)).revoke(extension_id):
        raise TabrelayError(f"extension {extension_id} is not paired")
    print(f"Unpaired chrome-extension://{extension_id}; its connections are closed")
    return 0


def _extension_id(raw: str) -> str:
    value = raw.strip().removeprefix("chrome-extension://").rstrip("/")
    if not EXTENSION_ID.match(value):
        raise UsageError(f"{raw!r} is not an extension id (32 letters a-p)")
    return value


# --- doctor ---------------------------------------------------------------------------------


def _doctor(args: argparse.Namespace, paths: Paths) -> int:
    checks = Doctor(paths).run()
    marks = {"ok": "ok  ", "info": "info", "warn": "WARN", "fail": "FAIL"}
    for check in checks:
        print(f"[{marks[check.status]}] {check.name}: {check.detail}")
        if check.fix:
            print(f"       fix: {check.fix}")
    return 1 if any(c.status == "fail" for c in checks) else 0


# --- argument types -------------------------------------------------------------------------


def _port(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not between 0 and 65535")
    return value


def _when(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")
