"""Object ids of a tab's child sessions (``child_sessions``), marked with their session.

An object of a child session is only good in that session: ``tag_objects`` marks each object id
in its answers with the session's (``session~object``), and ``routed`` sends a command that
names a marked object to that session, with the mark taken off. ``ToolContext.cdp`` does both,
so a tool acts on an element the same way wherever it lives.
"""

from __future__ import annotations

from typing import Any

from tabrelay.errors import CommandFailed

MARK = "~"  # between a child session's id and an object id of it (neither holds one)


def tagged(object_id: str, session: str) -> str:
    return f"{session}{MARK}{object_id}"


def session_of(object_id: str) -> str | None:
    """The child session an object id is marked with, None for one of the tab's own."""
    session, mark, _ = object_id.partition(MARK)
    return session if mark else None


def routed(session: str | None, params: dict[str, Any] | None) -> tuple[str | None, Any]:
    """Where a command goes (``session``, or the session of the marked objects it names) and
    its params with the marks taken off.

    Raises:
        CommandFailed: it names objects of two sessions (no command can use both).
    """
    if not params:
        return session, params
    seen: set[str | None] = {session} if session is not None else set()

    def unmarked(value: Any) -> Any:
        if isinstance(value, str) and MARK in value:
            owner, _, object_id = value.partition(MARK)
            seen.add(owner)
            return object_id
        seen.add(None)
        return value

    out = dict(params)
    if "objectId" in out:
        out["objectId"] = unmarked(out["objectId"])
    if isinstance(out.get("arguments"), list):
        out["arguments"] = [
            {**a, "objectId": unmarked(a["objectId"])} if isinstance(a, dict) and "objectId" in a
            else a
            for a in out["arguments"]
        ]  # fmt: skip
    if len(seen) > 1:
        raise CommandFailed("the elements are in different frames of the page")
    return (next(iter(seen)) if seen else None), out


def tag_objects(answer: Any, session: str) -> Any:
    """``answer`` of a child session with every object id in it marked as that session's (a
    remote object's own value, the page's data, is left as it is)."""
    if isinstance(answer, list):
        return [tag_objects(item, session) for item in answer]
    if not isinstance(answer, dict):
        return answer
    remote = "type" in answer  # a RemoteObject: its "value" is the page's, by value
    out: dict[str, Any] = {}
    for key, value in answer.items():
        if key == "objectId" and isinstance(value, str):
            out[key] = tagged(value, session)
        elif remote and key == "value":
            out[key] = value
        else:
            out[key] = tag_objects(value, session)
    return out


def may_make(params: dict[str, Any] | None) -> bool:
    """Whether a command may leave page objects in an object group: it names one, or it runs
    on an object and answers by reference (what it returns joins that object's group)."""
    if not params:
        return False
    return "objectGroup" in params or ("objectId" in params and not params.get("returnByValue"))


def holds_object(answer: Any) -> bool:
    """Whether an answer hands back a page object (an object id anywhere in it; a remote
    object's own value, the page's data, is not looked into)."""
    if isinstance(answer, list):
        return any(holds_object(item) for item in answer)
    if not isinstance(answer, dict):
        return False
    if isinstance(answer.get("objectId"), str):
        return True
    remote = "type" in answer
    return any(holds_object(v) for k, v in answer.items() if not (remote and k == "value"))
