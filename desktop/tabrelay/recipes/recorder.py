"""The recordings being made: one per agent session and tab, and one per demonstration, each
kept on disk as it grows so another process (the CLI) can list it and save it as a recipe.

A recording is one private JSON file, ``<folder>/<id>.json``, replaced atomically after every
change; the newest ``KEPT`` are kept. It is a draft, written in the middle of an agent's tool
call (or as a tab closes), on the event loop: never waited for on the disk (an fsync there
stalled every client), so a power cut may lose it, or leave it empty on some file systems (then
it is listed as a problem, not a recording); a recipe saved from it is waited for. Steps arrive
already free of secrets (a secret typed text is a ``{{name}}`` with a secret ``Param``, never a
value): this module never sees a page or a tool call, it only keeps what it is given and turns
it into a recipe on request.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets as _random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from tabrelay.config.files import atomic_write, make_private_dir, read_regular, tighten_dir
from tabrelay.errors import ConfigError, validation_text
from tabrelay.listeners import Listeners
from tabrelay.recipes.model import (
    MAX_STEPS,
    PARAM,
    Param,
    Recipe,
    RecipeError,
    Step,
    check_name,
    check_param_name,
    free_param_name,
)
from tabrelay.recipes.store import MAX_FILE, RecipeStore

Origin = Literal["agent", "demonstration"]
KEPT = 50  # recordings kept on disk, the most recently changed
# A recording holds one step less than a recipe may, so the start navigate save_as puts in
# front of a recording that did not begin with one always fits.
CAPACITY = MAX_STEPS - 1
MAX_GAPS = 100  # gap sentences kept per recording (all are counted)
FILE_FORMAT = 1
SUFFIX = ".json"
_ID = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{6}")
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecordingInfo:
    """One recording as the dashboard and ``tabrelay recipe list`` show it."""

    id: str
    origin: Origin
    client: str | None  # the MCP client (agent recordings)
    session: str | None  # the agent's MCP session, or None for a demonstration
    browser_id: str
    tab_id: int
    started: float  # seconds since the epoch
    updated: float
    steps: int
    live: bool  # still taking steps (its agent session or demonstration goes on)
    start_url: str | None  # the tab's URL when it began
    full: bool = False  # reached CAPACITY steps: takes no more
    gaps: int = 0  # calls that acted but could not be recorded (see ``add``'s ``gap``)


@dataclass
class _Recording:
    info: RecordingInfo
    steps: list[Step] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    final_url: str | None = None
    final_text: str | None = None
    encoded: list[str] = field(default_factory=list)  # each step's JSON, made once


class Recorder:
    """The recordings under one folder (the app's ``data_dir / "recipes" / "recordings"``).

    The app's process makes the recordings and holds the live ones in memory; any process may
    list them, read their steps, save one as a recipe or forget it. A recording forgotten (or
    pruned) by another process ends in this one at its next ``add``: the agent's next step
    begins a new one rather than bring a forgotten one back.

    Every method but ``add_listener`` writes or reads the disk and may block on it: each write
    is one small file (measured in tests/unit/test_recorder_drafts.py).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._live: dict[str, _Recording] = {}
        self._agents: dict[tuple[str, str, str, int], str] = {}
        self._cache: dict[str, tuple[tuple[int, int], RecordingInfo]] = {}
        self._changed: Listeners[[]] = Listeners("recordings")
        self._folder_made = False  # made and tightened by this process's first write

    # --- making recordings ------------------------------------------------------------------

    def begin(
        self,
        origin: Origin,
        *,
        client: str | None = None,
        session: str | None = None,
        browser_id: str,
        tab_id: int,
        start_url: str | None,
    ) -> str:
        """Start a recording and return its id; the oldest beyond ``KEPT`` are deleted.

        Raises:
            RecipeError: the folder cannot be written (why).
        """
        now = time.time()
        recording_id = f"{time.strftime('%Y%m%d-%H%M%S', time.localtime(now))}-"
        recording_id += _random.token_hex(3)
        info = RecordingInfo(
            id=recording_id,
            origin=origin,
            client=client,
            session=session,
            browser_id=browser_id,
            tab_id=tab_id,
            started=now,
            updated=now,
            steps=0,
            live=True,
            start_url=start_url,
        )
        recording = _Recording(info)
        self._write(recording)
        self._live[recording_id] = recording
        self._prune()
        self._changed.tell()
        return recording_id

    def for_agent(
        self, client: str, session: str, browser_id: str, tab_id: int, *, start_url: str | None
    ) -> str:
        """The recording of this agent session on this tab, begun on first use (and again
        after it was forgotten or finished).

        Raises:
            RecipeError: the folder cannot be written.
        """
        key = (client, session, browser_id, tab_id)
        known = self._agents.get(key)
        if known is not None and known in self._live and self._path(known).exists():
            return known
        recording_id = self.begin(
            "agent",
            client=client,
            session=session,
            browser_id=browser_id,
            tab_id=tab_id,
            start_url=start_url,
        )
        self._agents[key] = recording_id
        return recording_id

    def add(
        self,
        recording_id: str,
        steps: Sequence[Step],
        params: Sequence[Param] = (),
        *,
        final_url: str | None = None,
        final_text: str | None = None,
        gap: str | None = None,
    ) -> None:
        """Append what one call or one demonstrated action did.

        ``params`` are those its steps use; a name the recording already has for another value
        is renamed (``password`` → ``password_2``) in the steps too. ``final_url`` and
        ``final_text``, when given, replace the recording's (what a replay checks at the end).
        ``gap`` says an action happened that no step stands for (its element could not be
        described): the recording counts it, since a replay would skip that action. A full
        recording takes no more steps (its info says ``full``).

        Raises:
            RecipeError: the recording is not live in this process (finished, forgotten or
                pruned), a step uses a parameter not given, or the folder cannot be written.
        """
        recording = self._live.get(recording_id)
        if recording is None or not self._path(recording_id).exists():
            self._live.pop(recording_id, None)
            raise RecipeError(f"recording {recording_id} is not being made any more")
        steps, params = _renamed(list(steps), list(params), recording.params)
        taken = steps[: max(0, CAPACITY - len(recording.steps))]
        recording.steps.extend(taken)
        used = set().union(*(s.params() for s in recording.steps)) if taken else set()
        have = {p.name for p in recording.params}
        recording.params.extend(p for p in params if p.name in used and p.name not in have)
        if gap is not None and len(recording.gaps) < MAX_GAPS:
            recording.gaps.append(f"after step {len(recording.steps)}: {gap}"[:500])
        if final_url is not None:
            recording.final_url = final_url
        if final_text is not None:
            recording.final_text = final_text
        recording.info = replace(
            recording.info,
            updated=time.time(),
            steps=len(recording.steps),
            full=recording.info.full or len(taken) < len(steps),
            gaps=recording.info.gaps + (gap is not None),
        )
        self._write(recording)
        self._changed.tell()

    def finish(self, recording_id: str) -> None:
        """The recording takes no more steps (its session ended, its demonstration stopped).
        One not live in this process is left as it is."""
        recording = self._live.pop(recording_id, None)
        for key in [k for k, v in self._agents.items() if v == recording_id]:
            del self._agents[key]
        if recording is None:
            return
        recording.info = replace(recording.info, live=False, updated=time.time())
        if self._path(recording_id).exists():
            with contextlib.suppress(RecipeError):  # a file it cannot write stays live on disk
                self._write(recording)
        self._changed.tell()

    def finish_agent(self, client: str, session: str) -> None:
        """Finish every recording of this agent session (its MCP session ended)."""
        self._finish_agents(lambda key: key[:2] == (client, session))

    def finish_tab(self, browser_id: str, tab_id: int) -> None:
        """Finish the agents' recordings of this tab (it closed, or its browser went)."""
        self._finish_agents(lambda key: key[2:] == (browser_id, tab_id))

    def _finish_agents(self, which: Callable[[tuple[str, str, str, int]], bool]) -> None:
        for key, recording_id in list(self._agents.items()):
            if which(key):
                self.finish(recording_id)

    def forget(self, recording_id: str) -> None:
        """Delete the recording (live or not).

        Raises:
            RecipeError: no recording has that id, or its file cannot be deleted.
        """
        path = self._path(recording_id)
        self._live.pop(recording_id, None)
        self._cache.pop(recording_id, None)
        try:
            path.unlink()
        except FileNotFoundError:
            raise RecipeError(self._unknown(recording_id)) from None
        except OSError as exc:
            raise RecipeError(f"could not delete {path}: {exc.strerror or exc}") from None
        self._changed.tell()

    # --- reading ----------------------------------------------------------------------------

    def recordings(self) -> list[RecordingInfo]:
        """Every readable recording, the most recently changed first (``problems()`` names the
        rest)."""
        infos, _ = self._scan()
        return infos

    def problems(self) -> list[str]:
        """One sentence per file in the folder that is not a readable recording."""
        _, problems = self._scan()
        return problems

    def latest(self, origin: str = "agent") -> RecordingInfo | None:
        """The most recently changed recording of ``origin``, or None."""
        return next((i for i in self.recordings() if i.origin == origin), None)

    def info(self, recording_id: str) -> RecordingInfo:
        """Raises RecipeError: no readable recording has that id."""
        return self._load(recording_id).info

    def gaps(self, recording_id: str) -> list[str]:
        """What the recording could not record, one sentence each (at most ``MAX_GAPS``)."""
        return list(self._load(recording_id).gaps)

    def steps(self, recording_id: str) -> tuple[list[Step], list[Param]]:
        """The recording's steps and the parameters they use.

        Raises:
            RecipeError: no readable recording has that id (why).
        """
        recording = self._load(recording_id)
        return list(recording.steps), list(recording.params)

    # --- keeping ----------------------------------------------------------------------------

    def save_as(
        self,
        recording_id: str,
        name: str,
        store: RecipeStore,
        *,
        params: Mapping[int, str] | None = None,
        secret: Iterable[int] = (),
    ) -> Recipe:
        """Save the recording as the recipe ``name`` and return what was saved.

        ``params`` maps a step's index (from 0, as ``steps()`` lists them) to a parameter
        name: that step's text becomes ``{{name}}`` and its old text the parameter's default,
        unless the index is also in ``secret`` (then no value is kept). One name may stand for
        several steps that typed the same text. A recording that did not begin with a navigate
        begins with one to its ``start_url``.

        Raises:
            RecipeError: no such recording, it has no steps, a bad name or index, or the
                store cannot save (each says what to change).
        """
        check_name(name)
        recording = self._load(recording_id)
        steps = list(recording.steps)
        declared = list(recording.params)
        secret = set(secret)
        if stray := sorted(secret - set(params or {})):
            raise RecipeError(f"step {stray[0]} is marked secret but has no parameter name")
        made: dict[str, Param] = {}
        texts: dict[str, str] = {}
        for index, param in sorted((params or {}).items()):
            if not 0 <= index < len(steps):
                raise RecipeError(
                    f"recording {recording_id} has no step {index} (it has steps 0 to "
                    f"{len(steps) - 1})"
                )
            step = steps[index]
            check_param_name(param)
            if (why := step.why_not_nameable()) is not None:
                raise RecipeError(f"step {index} ({step.describe()}) {why}")
            assert step.text is not None  # a nameable step types text
            if any(p.name == param for p in declared):
                raise RecipeError(f"the recording has a parameter named {param!r} already")
            if param in texts and texts[param] != step.text:
                raise RecipeError(
                    f"parameter {param!r} is given for steps that typed different texts"
                )
            texts[param] = step.text
            is_secret = index in secret or (param in made and made[param].secret)
            made[param] = Param(
                name=param,
                secret=is_secret,
                default=None if is_secret else step.text,
            )
            steps[index] = step.model_copy(update={"text": f"{{{{{param}}}}}"})
        if not steps:
            raise RecipeError(f"recording {recording_id} has no steps to save yet")
        start = recording.info.start_url
        if steps[0].action != "navigate" and start:
            person = recording.info.origin == "demonstration"
            steps.insert(0, Step(action="navigate", url=start, by="person" if person else "agent"))
        try:
            recipe = Recipe(
                name=name,
                created=time.time(),
                origin=recording.info.origin,
                session=recording.info.session or recording.info.id,
                client=recording.info.client,
                steps=steps,
                params=[*declared, *made.values()],
                final_url=recording.final_url,
                final_text=recording.final_text,
            )
        except ValidationError as exc:
            problem = validation_text(exc, limit=1, whole="recipe")
            raise RecipeError(f"recording {recording_id} cannot be a recipe: {problem}") from None
        return store.save(recipe)

    def add_listener(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Call ``fn`` after every change this process makes; returns the way to stop."""
        return self._changed.add(fn)

    # --- inside -----------------------------------------------------------------------------

    def _path(self, recording_id: str) -> Path:
        if not isinstance(recording_id, str) or not _ID.fullmatch(recording_id):
            raise RecipeError(f"{str(recording_id)[:60]!r} is not a recording id")
        return self.folder / f"{recording_id}{SUFFIX}"

    def _unknown(self, recording_id: str) -> str:
        ids = [i.id for i in self.recordings()[:5]]
        return f"there is no recording {recording_id}; " + (
            f"the latest: {', '.join(ids)}" if ids else "none is kept"
        )

    def _write(self, recording: _Recording) -> None:
        info = recording.info
        data: dict[str, Any] = {
            "recording": FILE_FORMAT,
            "id": info.id,
            "origin": info.origin,
            "client": info.client,
            "session": info.session,
            "browser_id": info.browser_id,
            "tab_id": info.tab_id,
            "started": info.started,
            "updated": info.updated,
            "live": info.live,
            "start_url": info.start_url,
            "full": info.full,
            "gap_count": info.gaps,
            "gaps": recording.gaps,
            "final_url": recording.final_url,
            "final_text": recording.final_text,
            "params": [p.model_dump(mode="json", exclude_defaults=True) for p in recording.params],
        }
        # Each step is encoded once: re-encoding a thousand steps on every add cost ~7 ms.
        for step in recording.steps[len(recording.encoded) :]:
            dumped = step.model_dump(mode="json", exclude_defaults=True)
            recording.encoded.append(json.dumps(dumped, ensure_ascii=False))
        text = json.dumps(data, ensure_ascii=False)[:-1] + ', "steps": ['
        text += ", ".join(recording.encoded) + "]}"
        try:
            if not self._folder_made:  # atomic_write makes a missing folder private itself
                make_private_dir(self.folder)
                tighten_dir(self.folder)
                self._folder_made = True
            atomic_write(self._path(info.id), text.encode(), durable=False)
        except (OSError, ConfigError) as exc:
            reason = exc.message if isinstance(exc, ConfigError) else (exc.strerror or str(exc))
            raise RecipeError(f"could not keep recording {info.id}: {reason}") from None

    def _load(self, recording_id: str) -> _Recording:
        live = self._live.get(recording_id)
        if live is not None:
            return live
        path = self._path(recording_id)
        try:
            return _parse(_read(path), source=str(path))
        except FileNotFoundError:
            raise RecipeError(self._unknown(recording_id)) from None

    def _scan(self) -> tuple[list[RecordingInfo], list[str]]:
        infos: list[RecordingInfo] = []
        problems: list[str] = []
        try:
            entries = list(os.scandir(self.folder))
        except (FileNotFoundError, NotADirectoryError):
            return [], []
        except OSError as exc:
            raise RecipeError(f"could not read {self.folder}: {exc.strerror or exc}") from None
        seen = set()
        for entry in entries:
            if entry.name.startswith(".") or not entry.name.endswith(SUFFIX):
                continue  # temporary files of a write in progress, other files
            recording_id = entry.name[: -len(SUFFIX)]
            if not _ID.fullmatch(recording_id):
                problems.append(f"{entry.name}: not a recording's file name; it is left alone")
                continue
            seen.add(recording_id)
            if (live := self._live.get(recording_id)) is not None:
                infos.append(live.info)
                continue
            try:
                status = entry.stat()
                key = (status.st_mtime_ns, status.st_size)
                cached = self._cache.get(recording_id)
                if cached is not None and cached[0] == key:
                    infos.append(cached[1])
                    continue
                info = _parse(_read(Path(entry.path)), source=entry.path).info
            except FileNotFoundError:
                continue  # forgotten or pruned while listing
            except RecipeError as exc:
                problems.append(str(exc))
                continue
            self._cache[recording_id] = (key, info)
            infos.append(info)
        for gone in set(self._cache) - seen:
            del self._cache[gone]
        infos.sort(key=lambda i: (i.updated, i.started, i.id), reverse=True)
        return infos, problems

    def _prune(self) -> None:
        """Delete the least recently changed recordings beyond ``KEPT``; never one live here."""
        infos, _ = self._scan()
        for info in infos[KEPT:]:
            if info.id in self._live:
                continue
            with contextlib.suppress(FileNotFoundError):
                try:
                    self._path(info.id).unlink()
                except OSError as exc:
                    logger.warning("could not delete old recording %s: %s", info.id, exc)
            self._cache.pop(info.id, None)


def _renamed(
    steps: list[Step], params: list[Param], existing: list[Param]
) -> tuple[list[Step], list[Param]]:
    """``steps`` and ``params`` with each parameter whose name the recording already uses
    renamed to the next free ``name_2``, ``name_3``…

    Raises:
        RecipeError: a step uses a parameter ``params`` does not declare.
    """
    given = {p.name for p in params}
    for step in steps:
        if missing := sorted(step.params() - given):
            raise RecipeError(f"a recorded step uses an undeclared parameter: {missing[0]}")
    taken = {p.name for p in existing}
    renames: dict[str, str] = {}
    for param in params:
        if param.name not in taken:
            taken.add(param.name)
            continue
        new = free_param_name(param.name, taken | given)
        renames[param.name] = new
        taken.add(new)
    if not renames:
        return steps, params

    def swap(text: str) -> str:
        return PARAM.sub(lambda m: f"{{{{{renames.get(m.group(1), m.group(1))}}}}}", text)

    return (
        [s.model_copy(update={"text": swap(s.text)}) if s.text else s for s in steps],
        [p.model_copy(update={"name": renames.get(p.name, p.name)}) for p in params],
    )


def _read(path: Path) -> bytes:
    """Raises FileNotFoundError, or RecipeError for anything else."""
    try:
        return read_regular(path, limit=MAX_FILE)
    except ConfigError as error:
        raise RecipeError(f"recording file {error.message}") from None


def _parse(data: bytes, *, source: str) -> _Recording:
    """Raises RecipeError: the file is not a recording this version reads (why)."""
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecipeError(f"{source} is not a recording: it is not JSON ({exc})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("recording"), int):
        raise RecipeError(f"{source} is not a recording: no recording format in it")
    if raw["recording"] > FILE_FORMAT:
        raise RecipeError(f"{source} was written by a newer Tabrelay (format {raw['recording']})")
    try:
        steps = [Step.model_validate(s) for s in _list(raw, "steps")]
        params = [Param.model_validate(p) for p in _list(raw, "params")]
        origin = raw["origin"]
        if origin not in ("agent", "demonstration"):
            raise ValueError(f"origin {origin!r}")
        info = RecordingInfo(
            id=_text(raw, "id"),
            origin=origin,
            client=_maybe(raw, "client"),
            session=_maybe(raw, "session"),
            browser_id=_text(raw, "browser_id"),
            tab_id=_int(raw, "tab_id"),
            started=_number(raw, "started"),
            updated=_number(raw, "updated"),
            steps=len(steps),
            live=bool(raw.get("live")),
            start_url=_maybe(raw, "start_url"),
            full=bool(raw.get("full")),
            gaps=_int(raw, "gap_count"),
        )
        gaps = [str(g)[:500] for g in _list(raw, "gaps")[:MAX_GAPS]]
        final_url, final_text = _maybe(raw, "final_url"), _maybe(raw, "final_text")
    except (KeyError, ValueError, TypeError) as exc:
        # ValidationError is a ValueError: its first line names the model and the field.
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise RecipeError(f"{source} is not a valid recording: {reason}") from None
    return _Recording(info, steps, params, gaps, final_url, final_text)


def _list(raw: dict[str, Any], key: str) -> list[Any]:
    value = raw.get(key, [])
    if not isinstance(value, list):
        raise TypeError(f"{key} is not a list")
    return value


def _text(raw: dict[str, Any], key: str) -> str:
    value = raw[key]
    if not isinstance(value, str):
        raise TypeError(f"{key} is not text")
    return value


def _maybe(raw: dict[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{key} is not text")
    return value


def _int(raw: dict[str, Any], key: str) -> int:
    value = raw.get(key, 0)
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{key} is not a whole number")
    return value


def _number(raw: dict[str, Any], key: str) -> float:
    value = raw[key]
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise TypeError(f"{key} is not a number")
    return float(value)
