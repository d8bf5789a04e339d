"""The command line's recipe and handoff commands (``tabrelay recipe …``, ``tabrelay handoff …``).

Saved recipes and the recordings being made are files under the data folder, so listing,
saving and exporting work with or without the app. Running a recipe and ending a handoff need
the running app: a run is an MCP call of ``browser_run_recipe`` made as the command line's own
client (``CLI_CLIENT``, asked and logged like any other), and a handoff is ended through the
person's control routes (``endpoint/control.py``). A secret parameter is never taken from the
command line, where other processes can read it: it comes from ``TABRELAY_<NAME>`` or a prompt.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import anyio

from tabrelay.commands import open_tokens, running_mcp_port, when
from tabrelay.config.files import atomic_write
from tabrelay.config.mcp_clients import ClientTokens
from tabrelay.config.paths import Paths
from tabrelay.config.settings import SettingsStore
from tabrelay.endpoint.control import CLI_CLIENT, HANDOFFS_PATH, decode_error, run_recipe_in_app
from tabrelay.errors import TabrelayError, UsageError
from tabrelay.recipes.export import export
from tabrelay.recipes.model import Recipe, RecipeError, check_name
from tabrelay.recipes.recorder import Recorder
from tabrelay.recipes.store import RecipeStore

CONTROL_TIMEOUT = 10.0

# --- recipe ---------------------------------------------------------------------------------


def recipe_list(args: argparse.Namespace, paths: Paths) -> int:
    recordings = Recorder(paths.recordings_dir).recordings()
    store = RecipeStore(paths.recipes_dir)
    print("Recordings (save one with `tabrelay recipe save NAME [--session ID]`):")
    if not recordings:
        print("  none yet: an agent's acting calls and your demonstrations are recorded here")
    for info in recordings:
        who = info.client or "you"
        live = "  (recording)" if info.live else ""
        print(
            f"  {info.id}  {info.origin} by {who}, {info.steps} step"
            f"{'' if info.steps == 1 else 's'}, {when(info.updated)}{live}"
        )
    print("Saved recipes (run with `tabrelay recipe run NAME`):")
    saved, problems = store.scan()
    if not saved:
        print("  none yet")
    for recipe in saved:
        params = ", ".join(p.name + (" (secret)" if p.secret else "") for p in recipe.params)
        print(
            f"  {recipe.name}  revision {recipe.revision}, {len(recipe.steps)} steps"
            + (f", parameters: {params}" if params else "")
        )
    for problem in problems:
        print(f"tabrelay: {problem}", file=sys.stderr)
    return 0


def recipe_save(args: argparse.Namespace, paths: Paths) -> int:
    name = check_name(args.name)
    recorder = Recorder(paths.recordings_dir)
    if args.session is None:
        latest = recorder.latest("agent")
        if latest is None:
            raise TabrelayError(
                "no agent session was recorded yet; see `tabrelay recipe list` (a demonstration "
                "is saved with --session ID)"
            )
        session = latest.id
    else:
        session = args.session
    params = dict(_step_params(args.param or [], "--param"))
    secret = dict(_step_params(args.secret or [], "--secret"))
    if both := sorted(set(params) & set(secret)):
        raise UsageError(f"step {both[0]} is given both --param and --secret")
    recipe = recorder.save_as(
        session, name, RecipeStore(paths.recipes_dir), params={**params, **secret},
        secret=secret.keys(),
    )  # fmt: skip
    print(
        f"Saved recipe {recipe.name!r} (revision {recipe.revision}, {len(recipe.steps)} steps) "
        f"from {session}: {RecipeStore(paths.recipes_dir).path_of(recipe.name)}"
    )
    _print_steps(recipe)
    return 0


def recipe_show(args: argparse.Namespace, paths: Paths) -> int:
    recipe = RecipeStore(paths.recipes_dir).load(args.name)
    print(f"{recipe.name} (revision {recipe.revision}, from {recipe.origin})")
    _print_steps(recipe)
    return 0


def recipe_delete(args: argparse.Namespace, paths: Paths) -> int:
    RecipeStore(paths.recipes_dir).delete(args.name)
    print(f"Deleted recipe {args.name!r} (its earlier revisions stay in the history folder).")
    return 0


def recipe_export(args: argparse.Namespace, paths: Paths) -> int:
    recipe = RecipeStore(paths.recipes_dir).load(args.name)
    script = export(recipe, args.lang)
    if args.output is None:
        sys.stdout.write(script)
        return 0
    target = Path(args.output)
    atomic_write(target, script.encode("utf-8"))  # ConfigError says why it could not
    print(f"Wrote {target}", file=sys.stderr)
    return 0


def recipe_run(args: argparse.Namespace, paths: Paths) -> int:
    recipe = RecipeStore(paths.recipes_dir).load(args.name)
    values = _run_values(recipe, args.param or [])
    arguments: dict[str, Any] = {"name": recipe.name, "params": values}
    if args.tab is not None:
        arguments["tab_id"] = args.tab
    if args.browser is not None:
        arguments["browser"] = args.browser
    base, token = _app(paths)

    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    failed, text = anyio.run(run_recipe_in_app, base, token, arguments, progress)
    if failed:
        raise TabrelayError(text)
    print(text)
    return 0


def _run_values(recipe: Recipe, given: list[str]) -> dict[str, str]:
    """The parameter values of a run: ``--param k=v`` for plain ones; a secret one only from
    ``TABRELAY_<NAME>`` or a prompt (never argv, which other processes can read)."""
    values: dict[str, str] = {}
    secret = {p.name for p in recipe.params if p.secret}
    for item in given:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--param takes NAME=VALUE, not {item!r}")
        if key in secret:
            raise UsageError(
                f"{key} is a secret: give it in the environment (TABRELAY_{key.upper()}) or "
                "at the prompt, never on the command line"
            )
        values[key] = value
    for name in sorted(secret):
        kept = os.environ.get(f"TABRELAY_{name.upper()}")
        if kept is None and sys.stdin.isatty():
            kept = getpass.getpass(f"{name} (not shown, not kept): ")
        if kept is None:
            raise UsageError(
                f"recipe {recipe.name!r} needs its secret {name}: set TABRELAY_{name.upper()}"
            )
        values[name] = kept
    try:
        recipe.filled(values)  # every parameter has a value (a clear error before the app)
    except RecipeError as error:
        raise UsageError(error.message) from None
    return values


def _step_params(items: list[str], flag: str) -> list[tuple[int, str]]:
    pairs = []
    for item in items:
        step, sep, name = item.partition("=")
        if not sep or not step.isdigit():
            raise UsageError(f"{flag} takes STEP=NAME (a step number from 1), not {item!r}")
        pairs.append((int(step) - 1, name))
    return pairs


def _print_steps(recipe: Recipe) -> None:
    for number, step in enumerate(recipe.steps, 1):
        print(f"  {number:>3}. {step.describe()}")
    for param in recipe.params:
        kind = "secret, never stored" if param.secret else f"default {param.default!r}"
        print(f"  parameter {param.name}: {kind}")


# --- handoff --------------------------------------------------------------------------------


def handoff_list(args: argparse.Namespace, paths: Paths) -> int:
    answer = _control(paths, "GET", HANDOFFS_PATH)
    handoffs = answer.get("handoffs", [])
    if not handoffs:
        print("No tab is handed over to you.")
    for h in handoffs:
        print(
            f"{h['id']}  tab {h['tab_id']} ({h['title'] or h['url']}), "
            f"{h['seconds_left']} s left: {h['reason']}"
        )
    return 0


def handoff_done(args: argparse.Namespace, paths: Paths) -> int:
    _control(paths, "POST", f"{HANDOFFS_PATH}/{_handoff_id(args.id)}/done")
    print(f"Handoff {args.id} done: the agent goes on.")
    return 0


def handoff_cancel(args: argparse.Namespace, paths: Paths) -> int:
    _control(paths, "POST", f"{HANDOFFS_PATH}/{_handoff_id(args.id)}/cancel")
    print(f"Handoff {args.id} cancelled: the agent is told you did not do it.")
    return 0


def _handoff_id(raw: str) -> str:
    value = raw.strip()
    if not value or len(value) > 64 or not value.replace("-", "").isalnum():
        raise UsageError(f"{raw[:80]!r} is not a handoff id (see `tabrelay handoff list`)")
    return value


def _app(paths: Paths) -> tuple[str, str]:
    """The running app's base URL and the command line's own client token (made on first use)."""
    port = running_mcp_port(paths)
    if port is None:
        raise TabrelayError("Tabrelay is not running: start it (`tabrelay` or `tabrelay serve`)")
    tokens = open_tokens(paths)
    token = tokens.client_token(CLI_CLIENT)
    if token is None:
        token = ClientTokens(SettingsStore(paths.settings_file), tokens).add(CLI_CLIENT).token
    return f"http://127.0.0.1:{port}", token


def _control(paths: Paths, method: str, path: str) -> dict[str, Any]:
    base, token = _app(paths)
    request = urllib.request.Request(  # noqa: S310 (base is http://127.0.0.1:PORT)
        base + path, method=method, headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=CONTROL_TIMEOUT) as reply:  # noqa: S310
            answer: dict[str, Any] = json.loads(reply.read())
            return answer
    except urllib.error.HTTPError as error:
        raise TabrelayError(decode_error(error.read())) from None
    except (OSError, ValueError) as error:
        raise TabrelayError(f"could not reach Tabrelay: {error}") from None
