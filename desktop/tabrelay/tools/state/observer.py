"""What each tab has been doing, read from the event stream into its ``TabState``.

``TabObserver`` reads CDP and tab events from the hub (for tabs whose Runtime, Log, Network and
Page domains are enabled) into each tab's bounded ``TabLog``, so browser_console_messages and
browser_network_requests answer from memory, and a tool can tell at once that a JavaScript
dialog is blocking the page. It also tells ``TabStates`` when a frame shows a new document (a
closed tab needs no word from it: ``TabStates`` follows the browser's tab list), and the tab's
session which frames in other processes came and went (``child_sessions``). It keeps nothing
itself.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from tabrelay.errors import EventsClosed
from tabrelay.relay.events import EventHub, HubEvent, Subscription
from tabrelay.tools.state.tab_state import (
    ATTACHED,
    DETACHED,
    MAX_REQUESTS,
    ConsoleMessage,
    Dialog,
    Key,
    Request,
    TabLog,
    TabStates,
)


class TabObserver:
    def __init__(self, hub: EventHub, tabs: TabStates) -> None:
        self._tabs = tabs
        self._subscription: Subscription = hub.subscribe(
            maxlen=50_000, accept=lambda e: e.kind == "cdp"
        )

    def tab(self, browser_id: str, tab_id: int) -> TabLog:
        return self._tabs.tab(browser_id, tab_id).log

    async def run(self) -> None:
        """Consume the hub until it closes."""
        with contextlib.suppress(EventsClosed):
            while True:
                for event in await self._subscription.wait(limit=5000):
                    self.observe(event)

    def close(self) -> None:
        self._subscription.close()

    def observe(self, event: HubEvent) -> None:
        if event.tab_id is None or event.kind != "cdp":
            return
        key = (event.browser_id, event.tab_id)
        if event.method in (ATTACHED, DETACHED):
            state = self._tabs.get(*key)
            if state is not None:
                with contextlib.suppress(KeyError, TypeError, ValueError, AttributeError):
                    state.session.learn(event.method, event.params, event.session_id)
            return
        if event.session_id is not None:  # a frame in another process: its events are its own
            return
        handler = _HANDLERS.get(event.method)
        if handler is not None:
            with contextlib.suppress(KeyError, TypeError, ValueError):  # odd params: skip it
                handler(self, key, event.params)

    # --- handlers ---------------------------------------------------------------------------

    def _console_api(self, key: Key, params: dict[str, Any]) -> None:
        args = params.get("args", [])
        text = " ".join(_remote_text(a) for a in args)
        frames = (params.get("stackTrace") or {}).get("callFrames") or []
        source = (
            f"{frames[0].get('url', '')}:{frames[0].get('lineNumber', 0) + 1}" if frames else ""
        )
        self._console(
            key, ConsoleMessage(time.time(), _level(params.get("type", "log")), text, source)
        )

    def _log_entry(self, key: Key, params: dict[str, Any]) -> None:
        entry = params["entry"]
        source = entry.get("url", "")
        self._console(
            key,
            ConsoleMessage(time.time(), entry.get("level", "info"), entry.get("text", ""), source),
        )

    def _exception(self, key: Key, params: dict[str, Any]) -> None:
        details = params["exceptionDetails"]
        exception = details.get("exception") or {}
        description = str(exception.get("description") or "").splitlines()
        text = " ".join(
            p for p in (details.get("text", ""), description[0] if description else "") if p
        )
        source = f"{details.get('url', '')}:{details.get('lineNumber', 0) + 1}"
        self._console(key, ConsoleMessage(time.time(), "error", str(text).splitlines()[0], source))

    def _console(self, key: Key, message: ConsoleMessage) -> None:
        log = self.tab(*key)
        if len(log.console) == log.console.maxlen:
            log.console_dropped += 1
        log.console.append(message)

    def _request(self, key: Key, params: dict[str, Any]) -> None:
        log = self.tab(*key)
        request = params["request"]
        log.requests[params["requestId"]] = Request(
            id=params["requestId"],
            time=time.time(),
            method=request.get("method", "GET"),
            url=request.get("url", ""),
            resource_type=params.get("type", ""),
        )
        while len(log.requests) > MAX_REQUESTS:
            log.requests.popitem(last=False)
        log.last_network_activity = time.monotonic()

    def _response(self, key: Key, params: dict[str, Any]) -> None:
        log = self.tab(*key)
        request = log.requests.get(params["requestId"])
        if request is not None:
            response = params["response"]
            request.status = int(response.get("status", 0))
            request.mime_type = response.get("mimeType", "")
            request.resource_type = params.get("type", request.resource_type)
        log.last_network_activity = time.monotonic()

    def _finished(self, key: Key, params: dict[str, Any]) -> None:
        log = self.tab(*key)
        request = log.requests.get(params["requestId"])
        if request is not None:
            request.finished = True
            request.size = int(params.get("encodedDataLength", 0))
        log.last_network_activity = time.monotonic()

    def _failed(self, key: Key, params: dict[str, Any]) -> None:
        log = self.tab(*key)
        request = log.requests.get(params["requestId"])
        if request is not None:
            request.failed = params.get("errorText", "failed")
            if params.get("canceled"):
                request.failed = "canceled"
        log.last_network_activity = time.monotonic()

    def _dialog_opened(self, key: Key, params: dict[str, Any]) -> None:
        self.tab(*key).dialog = Dialog(
            params.get("type", "alert"), params.get("message", ""), params.get("defaultPrompt", "")
        )

    def _dialog_closed(self, key: Key, params: dict[str, Any]) -> None:
        self.tab(*key).dialog = None

    def _frame_navigated(self, key: Key, params: dict[str, Any]) -> None:
        frame = params["frame"]
        self._tabs.navigated(
            *key, str(frame["id"]), str(frame.get("loaderId", "")), main=not frame.get("parentId")
        )


_HANDLERS = {
    "Runtime.consoleAPICalled": TabObserver._console_api,
    "Runtime.exceptionThrown": TabObserver._exception,
    "Log.entryAdded": TabObserver._log_entry,
    "Network.requestWillBeSent": TabObserver._request,
    "Network.responseReceived": TabObserver._response,
    "Network.loadingFinished": TabObserver._finished,
    "Network.loadingFailed": TabObserver._failed,
    "Page.javascriptDialogOpening": TabObserver._dialog_opened,
    "Page.javascriptDialogClosed": TabObserver._dialog_closed,
    "Page.frameNavigated": TabObserver._frame_navigated,
}


def _level(kind: str) -> str:
    return {"warning": "warning", "error": "error", "assert": "error", "debug": "debug"}.get(
        kind, "info" if kind == "info" else "log"
    )


def _remote_text(arg: dict[str, Any]) -> str:
    if "value" in arg:
        value = arg["value"]
        return value if isinstance(value, str) else repr(value)
    if "unserializableValue" in arg:
        return str(arg["unserializableValue"])
    preview = arg.get("preview")
    if preview and preview.get("properties") is not None:
        inner = ", ".join(f"{p['name']}: {p.get('value', '')}" for p in preview["properties"][:10])
        return f"{arg.get('className') or arg.get('type', '')} {{{inner}}}"
    return str(arg.get("description", arg.get("type", "")))
