"""The settings owner in a running app: tool calls never touch the settings file, a bad file
never costs the settings in force, cancelling a change at any await loses nothing, and retired
credentials expire."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest

from support.fake_extension import EXTENSION_ID, FakeExtension
from support.harness import RelayHarness, running_core
from support.mcp import mcp_client, text_of
from tabrelay.config.mcp_clients import ClientTokens
from tabrelay.config.paths import Paths
from tabrelay.config.secrets import TokenStore
from tabrelay.config.settings import RETIRED_DAYS, PolicyRule, Settings, SettingsStore
from tabrelay.protocol.constants import CloseCode
from tabrelay.relay.pairing import Pairing

CALLS = 200


# --- counting file-system calls ---------------------------------------------------------------


class FileCalls:
    """Every file-system call this process makes on some paths, from any thread: the audit
    events of open/rename/remove/mkdir/listdir/chmod… (PEP 578) and, since ``stat`` raises no
    audit event, ``os.stat``/``os.lstat`` wrapped (``Path.stat`` and ``os.path.exists`` call
    them). An audit hook cannot be removed, so one is installed per process and only counts
    while a counter is active."""

    _active: ClassVar[list[FileCalls]] = []
    _installed: ClassVar[bool] = False
    _guard: ClassVar[threading.local] = threading.local()

    def __init__(self, *paths: Path) -> None:
        self.paths = {os.fspath(p) for p in paths}
        self.calls: list[tuple[str, str]] = []

    @classmethod
    def _install(cls) -> None:
        if cls._installed:
            return
        cls._installed = True
        sys.addaudithook(cls._audit)
        for name in ("stat", "lstat"):
            original = getattr(os, name)

            def counted(
                path: Any, *args: Any, _original: Any = original, _name: str = name, **kwargs: Any
            ) -> Any:
                cls._record(f"os.{_name}", path)
                return _original(path, *args, **kwargs)

            setattr(os, name, counted)

    @classmethod
    def _audit(cls, event: str, args: tuple[Any, ...]) -> None:
        if not cls._active or not args or event.startswith(("sys.", "object.", "code.")):
            return
        for arg in args[:2]:
            if isinstance(arg, (str, bytes, os.PathLike)):
                cls._record(event, arg)

    @classmethod
    def _record(cls, event: str, path: Any) -> None:
        if not cls._active or getattr(cls._guard, "busy", False):
            return
        cls._guard.busy = True
        try:
            try:
                name = os.fsdecode(os.fspath(path)) if not isinstance(path, int) else ""
            except TypeError:
                return
            for counter in cls._active:
                if name in counter.paths:
                    counter.calls.append((event, name))
        finally:
            cls._guard.busy = False

    @contextmanager
    def counting(self) -> Iterator[FileCalls]:
        self._install()
        self._active.append(self)
        try:
            yield self
        finally:
            self._active.remove(self)


def _settings_paths(home: Paths) -> tuple[Path, Path]:
    return home.settings_file, home.settings_file.with_name("settings.json.lock")


def _allow_everything(settings: Settings) -> None:
    settings.policy_rules.append(PolicyRule(tool="*", decision="allow"))


async def test_two_hundred_tool_calls_make_no_file_system_call_on_the_settings(
    relay: RelayHarness, home: Paths
) -> None:
    await asyncio.to_thread(relay.core.settings_store.update, _allow_everything)
    await relay.extension()
    await relay.browser_count(1)
    token = await relay.add_client()
    counter = FileCalls(*_settings_paths(home))
    async with mcp_client(relay.base_mcp(), token) as client:
        for tool, arguments in (("browser_evaluate", {"expression": "1"}),) * 5:
            warm = await client.call_tool(tool, arguments)  # sessions, caches: warmed first
            assert not warm.is_error, text_of(warm)
        with counter.counting():
            for i in range(CALLS):
                tool, arguments = (
                    ("browser_evaluate", {"expression": f"{i}+1", "tab_id": 1})
                    if i % 2
                    else ("browser_list_tabs", {})
                )
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, text_of(result)
        assert counter.calls == [], counter.calls[:5]

        # The counter does count: a change another process writes is read, and counted.
        with counter.counting():
            other = SettingsStore(home.settings_file)
            await asyncio.to_thread(other.update, lambda s: setattr(s, "approval_timeout", 42))
            async with asyncio.timeout(5):
                while relay.core.settings.approval_timeout != 42:
                    await asyncio.sleep(0.01)
            calls_for_a_reload = list(counter.calls)
            del counter.calls[:]
            result = await client.call_tool("browser_list_tabs", {})
            assert not result.is_error and counter.calls == []
    events = {event for event, _ in calls_for_a_reload}
    assert {"os.stat", "open"} <= events, calls_for_a_reload
    assert relay.core.settings.approval_timeout == 42


# --- hostile files ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    ["\x00garbage\xff", '{"schema_version": 2, "pairings": [{"id": "b-1', '{"relay_port": -1}'],
    ids=["garbage", "partial-write", "invalid"],
)
async def test_a_bad_settings_file_while_the_app_runs_keeps_what_is_in_force_and_says_so(
    relay: RelayHarness, home: Paths, content: str
) -> None:
    await asyncio.to_thread(relay.core.settings_store.update, _allow_everything)
    extension = await relay.extension()
    await relay.browser_count(1)
    token = await relay.add_client()
    in_force = relay.core.settings
    published = relay.core.settings_store.generation
    # Written in place, not atomically: a careless editor, or a crash half-way.
    await asyncio.to_thread(home.settings_file.write_text, content)
    async with asyncio.timeout(5):
        while relay.core.settings_store.generation == published:
            await asyncio.sleep(0.01)
    await relay.core.settled()
    assert relay.core.settings is in_force
    [problem] = relay.core.settings_store.problems
    assert "the settings in force are kept" in problem
    [bad] = list(home.config_dir.glob("settings.json.*.bad"))
    assert bad.read_text() == content
    assert SettingsStore(home.settings_file).load() == in_force, "written back for the CLI"
    # Nothing was lost: the browser stays, the client's token and the rules still work.
    assert not extension.closed.is_set() and len(relay.core.registry) == 1
    async with mcp_client(relay.base_mcp(), token) as client:
        result = await client.call_tool("browser_evaluate", {"expression": "1", "tab_id": 1})
    assert not result.is_error, text_of(result)
    # And a good change after it is taken in as usual.
    other = SettingsStore(home.settings_file)
    await asyncio.to_thread(other.update, lambda s: setattr(s, "approval_timeout", 42))
    async with asyncio.timeout(5):
        while relay.core.settings.approval_timeout != 42:
            await asyncio.sleep(0.01)


# --- cancellation -----------------------------------------------------------------------------


async def _drive(
    coro: Coroutine[Any, Any, Any], cancel_at: int | None, seen: list[int] | None = None
) -> int:
    """Run ``coro`` as a task would, and cancel it at its ``cancel_at``-th suspension as
    ``Task.cancel`` does (the awaited future is cancelled, or a bare yield gets the
    exception). Returns how many times it suspended; ``seen`` gets each suspension as it
    comes."""
    suspensions = 0
    send: Callable[[], Any] = lambda: coro.send(None)  # noqa: E731
    while True:
        try:
            yielded = send()
        except StopIteration:
            return suspensions
        send = lambda: coro.send(None)  # noqa: E731
        if suspensions == cancel_at:
            if isinstance(yielded, asyncio.Future):
                yielded.cancel()
            else:
                send = lambda: coro.throw(asyncio.CancelledError())  # noqa: E731
        elif isinstance(yielded, asyncio.Future):
            yielded._asyncio_future_blocking = False
            if seen is not None:
                seen.append(suspensions)
            await asyncio.wait({yielded})
        else:
            await asyncio.sleep(0)
        suspensions += 1


async def _another_process_revokes_and_adds(
    relay: RelayHarness, home: Paths, n: int
) -> tuple[FakeExtension, str, str]:
    """A browser connected now, then unpaired by `tabrelay pair revoke` while `tabrelay client
    add` makes a client: both in objects of their own, as another process would."""
    extension_id = chr(ord("a") + n % 16) * 31 + "p"
    credential = await relay.pair(extension_id)
    [(pairing_id, _)] = [
        (i, t) for i, t in relay.core.credentials_for(extension_id) if t == credential
    ]
    extension = await relay.extension(
        extension_id=extension_id, token=credential, instance=f"profile-{n}"
    )
    # Written without giving the loop a turn, so the app's watcher has not seen it yet when
    # the caller starts to catch up: every await of the catch-up is then really waited on.
    store, tokens = SettingsStore(home.settings_file), TokenStore.open(home)
    Pairing(store, tokens).revoke(pairing_id)
    new = ClientTokens(store, tokens).add(f"agent-{n}")
    return extension, new.name, new.token


async def _nothing_lost(
    relay: RelayHarness, extension: FakeExtension, name: str, token: str
) -> None:
    assert await extension.wait_closed() == CloseCode.NOT_PAIRED
    async with asyncio.timeout(5):
        while relay.core.client_tokens().get(name) != token:
            await asyncio.sleep(0.01)
    async with mcp_client(relay.base_mcp(), token) as client:
        result = await client.call_tool("browser_status", {})
    assert not result.is_error, text_of(result)


async def test_a_catch_up_cancelled_at_any_await_loses_nothing(
    relay: RelayHarness, home: Paths
) -> None:
    """What a request with a token the app does not know yet runs (bounded by a timeout, so
    it may be cancelled anywhere): the change it went for is applied all the same. How many
    awaits a run meets after the first two depends on how far the applier got, so a later
    run may finish before the await it was to be cancelled at (as for a rotation, below)."""
    catch_up: Callable[[], Coroutine[Any, Any, None]] = relay.core._catch_up
    extension, name, token = await _another_process_revokes_and_adds(relay, home, 0)
    awaits = await _held_back(relay, catch_up(), None)
    await _nothing_lost(relay, extension, name, token)
    assert awaits >= 2
    cancelled: list[int] = []
    for at in range(awaits):
        extension, name, token = await _another_process_revokes_and_adds(relay, home, at + 1)
        try:
            await _held_back(relay, catch_up(), at)
        except asyncio.CancelledError:
            cancelled.append(at)
        await _nothing_lost(relay, extension, name, token)
    assert cancelled[:2] == [0, 1]  # the two awaits every run meets (held back until it waits)


async def _held_back(
    relay: RelayHarness, coro: Coroutine[Any, Any, Any], cancel_at: int | None
) -> int:
    """``_drive`` a change that waits until it is applied (a catch-up, a rotation) while the
    applier cannot record it (it does so under the core's condition, held here until the
    change waits on it): otherwise the applier, woken by the app's own watcher or the change's
    own write, may finish first and leave nothing to wait for, so the awaits met would depend
    on timing."""
    seen: list[int] = []
    async with relay.core._settled:
        driving = asyncio.ensure_future(_drive(coro, cancel_at, seen))
        async with asyncio.timeout(10):
            while len(seen) < 2 and not driving.done():
                await asyncio.sleep(0.005)
    return await driving


async def test_a_rotation_cancelled_at_any_await_loses_nothing(
    relay: RelayHarness, home: Paths
) -> None:
    """The tray's "replace every credential", cancelled at each of its awaits (how many it
    meets depends on how far the applier got): every browser is told to pair again."""
    awaits: int | None = None
    cancelled = 0
    at = 0
    while awaits is None or at < awaits:
        extension = await relay.extension(instance=f"profile-{at}")
        await relay.browser_count(1)
        rotations = relay.core.settings.rotations
        if awaits is None:
            awaits = await _held_back(relay, relay.core.rotate_relay_token(), None)
        else:
            try:
                await _held_back(relay, relay.core.rotate_relay_token(), at)
            except asyncio.CancelledError:
                cancelled += 1
            at += 1
        assert await extension.wait_closed() == CloseCode.TOKEN_ROTATED
        await relay.browser_count(0)
        assert relay.core.settings.rotations == rotations + 1
        await relay.pair()
    assert awaits >= 2 and cancelled >= 1


# --- retired credentials --------------------------------------------------------------------


def _age(settings: Settings) -> None:
    for retired in settings.retired_pairings:
        retired.retired_at = time.time() - RETIRED_DAYS * 86400 - 1


async def test_a_retired_credential_older_than_thirty_days_is_refused_and_pruned_at_start(
    home: Paths,
) -> None:
    async with running_core(home) as relay:
        old = relay.token
        await relay.core.rotate_relay_token()
    SettingsStore(home.settings_file).update(_age)
    [retired] = SettingsStore(home.settings_file).load().retired_pairings
    async with running_core(home, paired=()) as relay:
        assert relay.core.settings.retired_pairings == []
        assert relay.tokens.browser_credential(retired.id) is None
        assert not relay.core.pairing.has_retired(EXTENSION_ID)
        with pytest.raises(Exception, match="403"):  # not proved to: refused before the upgrade
            await FakeExtension(relay.port, old).connect()


async def test_a_retired_credential_that_expires_while_the_app_runs_is_refused_and_pruned(
    home: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tabrelay.core.UNLOCK_LOOK_INTERVAL", 0.05)  # the upkeep cadence
    async with running_core(home) as relay:
        old = relay.token
        await relay.core.rotate_relay_token()
        [retired] = relay.core.settings.retired_pairings
        assert relay.core.pairing.has_retired(EXTENSION_ID)
        # Thirty days pass (its date is moved back rather than the clock forward).
        await asyncio.to_thread(relay.core.settings_store.update, _age)
        assert not relay.core.pairing.has_retired(EXTENSION_ID), "refused at once"
        with pytest.raises(Exception, match="403"):
            await FakeExtension(relay.port, old).connect()
        # The settings drop it first, then its credential goes (prune_retired, in a thread).
        async with asyncio.timeout(5):
            while relay.core.settings.retired_pairings or relay.tokens.browser_credential(
                retired.id
            ):
                await asyncio.sleep(0.01)
        assert SettingsStore(home.settings_file).load().retired_pairings == []
