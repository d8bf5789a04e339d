"""The ``tabrelay`` command line (DESIGN §12), and the composition root of the headless app.

Exit codes: 0 success, 2 usage error, 1 anything else, each failure with one clear line on
stderr. Commands that change state write the settings file or the secret store; a running
app notices within a fraction of a second (``core.py`` watches), so no restart is needed.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import NoReturn

from tabrelay import __version__, cli_recipes, commands
from tabrelay.approval.policy import DECISIONS
from tabrelay.config.files import make_private_dir, private_opener, restrict_umask
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import KeychainUnavailable, TokenStore
from tabrelay.endpoint import MCP_PATH
from tabrelay.errors import TabrelayError, UsageError
from tabrelay.protocol.constants import RELAY_PATH
from tabrelay.relay.pairing import GRANT_MINUTES
from tabrelay.store.commandlog import EXPORT_FORMATS
from tabrelay.system.clients import CLIENTS
from tabrelay.system.doctor import running_instance
from tabrelay.system.launcher import tabrelay_command
from tabrelay.system.logs import Redactor, setup_logging
from tabrelay.system.signals import stop_on_signals

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
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the core headless (no tray)")
    serve.add_argument("--relay-port", type=_port, metavar="N", help="relay port (default 23001)")
    serve.add_argument("--mcp-port", type=_port, metavar="N", help="MCP port (default 23002)")
    serve.add_argument("--verbose", "-v", action="store_true", help="log at DEBUG level")
    serve.set_defaults(handler=_serve)

    token = sub.add_parser("token", help="browser credentials").add_subparsers(
        dest="action", metavar="ACTION", required=True
    )
    token.add_parser("show", help="(each browser has its own now: see pair add)").set_defaults(
        handler=commands.token_show
    )
    token.add_parser(
        "rotate", help="replace every browser's credential (each pairs again)"
    ).set_defaults(handler=commands.token_rotate)

    pair = sub.add_parser("pair", help="paired browsers").add_subparsers(
        dest="action", metavar="ACTION", required=True
    )
    pair.add_parser("list", help="list paired browsers").set_defaults(handler=commands.pair_list)
    allow = pair.add_parser("allow", help="let an extension pair once, within minutes")
    allow.add_argument("extension_id", metavar="EXTENSION_ID")
    allow.add_argument(
        "--minutes", type=float, default=GRANT_MINUTES, metavar="M", help="(default 10)"
    )
    allow.add_argument(
        "--code", metavar="CODE", help="only the request showing this code (the popup shows it)"
    )
    allow.set_defaults(handler=commands.pair_allow)
    add_pairing = pair.add_parser("add", help="pair a browser by hand (prints its credential)")
    add_pairing.add_argument(
        "extension_id", nargs="?", metavar="EXTENSION_ID", help="default: the Tabrelay extension"
    )
    add_pairing.set_defaults(handler=commands.pair_add)
    revoke = pair.add_parser("revoke", help="unpair a browser, or every browser of an extension")
    revoke.add_argument("pairing", metavar="PAIRING_ID|EXTENSION_ID")
    revoke.set_defaults(handler=commands.pair_revoke)

    client = sub.add_parser("client", help="MCP clients and their tokens").add_subparsers(
        dest="action", metavar="ACTION", required=True
    )
    add = client.add_parser("add", help="create a client token (shown once) and config snippets")
    add.add_argument("name", metavar="NAME")
    add.add_argument(
        "--to",
        choices=sorted(CLIENTS),
        metavar="CLIENT",
        help="also add Tabrelay to this client's config file (backed up first; its other "
        f"servers and settings stay): {', '.join(sorted(CLIENTS))}",
    )
    add.set_defaults(handler=commands.client_add)
    client.add_parser("list", help="list MCP clients").set_defaults(handler=commands.client_list)
    drop = client.add_parser("revoke", help="revoke a client's token at once")
    drop.add_argument("name", metavar="NAME")
    drop.set_defaults(handler=commands.client_revoke)

    policy = sub.add_parser("policy", help="approval rules").add_subparsers(
        dest="action", metavar="ACTION", required=True
    )
    policy.add_parser("list", help="list the rules").set_defaults(handler=commands.policy_list)
    rule = policy.add_parser("set", help="allow, ask or deny a tool (on a site, for a client)")
    rule.add_argument("tool", metavar="TOOL", help="a tool name, or * for every tool")
    rule.add_argument("decision", choices=DECISIONS)
    rule.add_argument(
        "--site", metavar="ORIGIN", help="only on this site, e.g. https://example.com"
    )
    rule.add_argument("--client", metavar="NAME", help="only for this MCP client")
    rule.add_argument("--hours", type=float, metavar="H", help="expire after H hours")
    rule.set_defaults(handler=commands.policy_set)
    policy.add_parser("reset", help="remove every rule (back to the defaults)").set_defaults(
        handler=commands.policy_reset
    )

    log = sub.add_parser("log", help="the command log").add_subparsers(
        dest="action", metavar="ACTION", required=True
    )
    tail = log.add_parser("tail", help="the latest calls")
    tail.add_argument("-n", type=int, default=20, metavar="N", help="how many (default 20)")
    tail.add_argument("--follow", "-f", action="store_true", help="keep printing new calls")
    tail.set_defaults(handler=commands.log_tail)
    export = log.add_parser("export", help="every call, to stdout or a file")
    export.add_argument("--format", choices=EXPORT_FORMATS, default="jsonl")
    export.add_argument("--output", "-o", metavar="FILE", help="write here instead of stdout")
    export.set_defaults(handler=commands.log_export)

    stdio = sub.add_parser("mcp-stdio", help="MCP over stdio, for clients that need it")
    stdio.add_argument("--client", required=True, metavar="NAME", help="the client's name")
    stdio.set_defaults(handler=_mcp_stdio)

    secrets = sub.add_parser("secrets", help="where secrets live").add_subparsers(
        dest="action", metavar="ACTION", required=True
    )
    secrets.add_parser("where", help="the keychain or the file, and any problem").set_defaults(
        handler=commands.secrets_where
    )
    use = secrets.add_parser("use", help="move every secret to the keychain or the file")
    use.add_argument("place", choices=("keychain", "file"))
    use.add_argument(
        "--forget-unreadable",
        action="store_true",
        help="give up what a locked keychain holds (browsers pair again, clients get new tokens)",
    )
    use.set_defaults(handler=commands.secrets_use)

    recipe = sub.add_parser("recipe", help="recorded steps: save, run, export").add_subparsers(
        dest="action", metavar="ACTION", required=True
    )
    recipe.add_parser("list", help="recordings and saved recipes").set_defaults(
        handler=cli_recipes.recipe_list
    )
    save = recipe.add_parser("save", help="keep a recording (the latest agent session) as NAME")
    save.add_argument("name", metavar="NAME")
    save.add_argument("--session", metavar="ID", help="another recording (see recipe list)")
    save.add_argument(
        "--param", action="append", metavar="STEP=NAME",
        help="make the text typed in step STEP the parameter NAME (its text the default)",
    )  # fmt: skip
    save.add_argument(
        "--secret", action="append", metavar="STEP=NAME",
        help="make the text typed in step STEP the secret parameter NAME (no value kept)",
    )  # fmt: skip
    save.set_defaults(handler=cli_recipes.recipe_save)
    show = recipe.add_parser("show", help="a saved recipe's steps and parameters")
    show.add_argument("name", metavar="NAME")
    show.set_defaults(handler=cli_recipes.recipe_show)
    run = recipe.add_parser("run", help="run a saved recipe in the browser (asks like an agent)")
    run.add_argument("name", metavar="NAME")
    run.add_argument(
        "--param", action="append", metavar="NAME=VALUE",
        help="a parameter's value (secret ones come from TABRELAY_NAME or a prompt)",
    )  # fmt: skip
    run.add_argument("--tab", type=int, metavar="ID", help="the tab (default: the active one)")
    run.add_argument("--browser", metavar="ID", help="the browser, when more than one is connected")
    run.set_defaults(handler=cli_recipes.recipe_run)
    to_code = recipe.add_parser("export", help="a Playwright script of a saved recipe")
    to_code.add_argument("name", metavar="NAME")
    to_code.add_argument("--lang", choices=("python", "typescript"), required=True)
    to_code.add_argument("--output", "-o", metavar="FILE", help="write here instead of stdout")
    to_code.set_defaults(handler=cli_recipes.recipe_export)
    delete = recipe.add_parser("delete", help="delete a saved recipe")
    delete.add_argument("name", metavar="NAME")
    delete.set_defaults(handler=cli_recipes.recipe_delete)

    handoff = sub.add_parser("handoff", help="tabs an agent handed to you").add_subparsers(
        dest="action", metavar="ACTION", required=True
    )
    handoff.add_parser("list", help="the open handoffs").set_defaults(
        handler=cli_recipes.handoff_list
    )
    for action, helped in (("done", "you did it: the agent goes on"), ("cancel", "you did not")):
        end = handoff.add_parser(action, help=helped)
        end.add_argument("id", metavar="ID")
        end.set_defaults(handler=getattr(cli_recipes, f"handoff_{action}"))

    sub.add_parser("doctor", help="check what works and how to fix what does not").set_defaults(
        handler=commands.doctor
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Before anything is written, everything this process creates is private; argparse writes
    # nothing, and `--help` or `--version` run in-process leave the caller's umask alone.
    restrict_umask()
    handler: Handler = getattr(args, "handler", _gui)
    if args.command is None:
        args.relay_port = args.mcp_port = None
        args.verbose = False
    try:
        paths = Paths.resolve()
        paths.tighten()  # an older install, or a file someone widened
        return handler(args, paths)
    except UsageError as exc:
        print(f"tabrelay: error: {exc.message}", file=sys.stderr)
        return 2
    except KeychainUnavailable as exc:
        print(f"tabrelay: {exc.message}. {commands.KEYCHAIN_HINT}", file=sys.stderr)
        return 1
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


# --- the tray app ---------------------------------------------------------------------------


def _gui(args: argparse.Namespace, paths: Paths) -> int:
    """``tabrelay`` alone: the tray app, or the headless core where no GUI can run."""
    reason = _no_display()
    if reason is None:
        try:
            # Only this branch loads Qt, so every other command stays Qt-free.
            from tabrelay.app import main as gui_main
        except ImportError as exc:  # PySide6 missing, or a system library Qt needs (libEGL…)
            reason = f"Qt cannot load ({exc})"
        else:
            return gui_main(paths, verbose=args.verbose)
    print(f"tabrelay: {reason}; running headless instead (`tabrelay serve`)", file=sys.stderr)
    return _serve(args, paths)


def _no_display() -> str | None:
    """Why the tray app cannot show here, or ``None`` when it may try."""
    if sys.platform in ("win32", "darwin"):
        return None
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith(("xcb", "wayland")):
        return None  # offscreen, vnc, eglfs…: the person chose a platform
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    return "no display (neither DISPLAY nor WAYLAND_DISPLAY is set)"


# --- serve ----------------------------------------------------------------------------------


def _serve(args: argparse.Namespace, paths: Paths) -> int:
    redactor = Redactor()
    setup_logging(
        redactor, log_file=paths.log_file, level=logging.DEBUG if args.verbose else logging.INFO
    )
    return asyncio.run(_run_headless(args, paths, redactor))


async def _run_headless(args: argparse.Namespace, paths: Paths, redactor: Redactor) -> int:
    # the MCP SDK is slow to import: only here
    from tabrelay.core import Core, CoreOptions, freeze_startup_objects

    instance = await asyncio.to_thread(running_instance, paths)
    if instance is not None:
        print(
            f"tabrelay: Tabrelay is already running (process {instance['pid']}, MCP port "
            f"{instance['mcp_port']}); nothing else to start",
            file=sys.stderr,
        )
        return 0
    tokens = await asyncio.to_thread(TokenStore.open, paths, on_wait=commands.say_waiting)
    for problem in tokens.all_problems():
        logger.warning("%s", problem)
    if tokens.problem is not None:
        logger.warning("%s. %s", tokens.problem.message, commands.KEYCHAIN_HINT)
    core = Core(
        paths,
        tokens,
        redactor=redactor,
        options=CoreOptions(relay_port=args.relay_port, mcp_port=args.mcp_port),
    )
    await core.start()
    assert core.relay is not None
    assert core.endpoint is not None
    freeze_startup_objects()
    stop = asyncio.Event()
    restore_signals = stop_on_signals(asyncio.get_running_loop(), stop.set)
    print(
        f"tabrelay: serving relay on ws://{core.relay.host}:{core.relay.port}{RELAY_PATH}, "
        f"MCP on http://{core.endpoint.host}:{core.endpoint.port}{MCP_PATH} (Ctrl+C to stop)",
        file=sys.stderr,
        flush=True,
    )
    try:
        await stop.wait()
    finally:
        await core.stop()
        restore_signals()
    return 0


# --- mcp-stdio ------------------------------------------------------------------------------

APP_START_TIMEOUT = 20.0


def _mcp_stdio(args: argparse.Namespace, paths: Paths) -> int:
    from tabrelay.endpoint.bridge import pump

    # stdout carries the protocol: every log line goes to stderr.
    setup_logging(Redactor(), log_file=None, level=logging.WARNING)
    token = commands.open_tokens(paths).client_token(args.client)
    missing = (
        f"No MCP client named {args.client!r} in Tabrelay. Create it with "
        f"`tabrelay client add {args.client}` (or in the tray: Connect an MCP client)."
    )
    port = commands.running_mcp_port(paths) or _start_headless(paths)
    url = f"http://127.0.0.1:{port}{MCP_PATH}" if port else "http://127.0.0.1:0/unreachable"
    import anyio

    anyio.run(lambda: pump(url, token, missing_token=missing))
    return 0


def _start_headless(paths: Paths) -> int | None:
    """Start ``tabrelay serve`` in the background and wait for it to be ready."""
    make_private_dir(paths.log_dir)
    with open(paths.log_dir / "serve-from-stdio.log", "ab", opener=private_opener) as log:
        subprocess.Popen(
            [*tabrelay_command(), "serve"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            env=os.environ.copy(),
            # Windows: no console window for the background app (0 elsewhere).
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
        )
    deadline = time.monotonic() + APP_START_TIMEOUT
    while time.monotonic() < deadline:
        port = commands.running_mcp_port(paths)
        if port:
            return port
        time.sleep(0.1)
    logger.error("Tabrelay did not start within %g s; see %s", APP_START_TIMEOUT, paths.log_dir)
    return None


# --- argument types -------------------------------------------------------------------------


def _port(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not between 0 and 65535")
    return value
