"""Settings: defaults, validation, migration, bad files kept aside, atomic locked writes."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from tabrelay.config.paths import Paths
from tabrelay.config.settings import (
    MIGRATIONS,
    SCHEMA_VERSION,
    PairedBrowser,
    Settings,
    SettingsStore,
    migrate,
    parse_settings,
)
from tabrelay.errors import SettingsError


def test_missing_file_gives_defaults_without_writing(home: Paths) -> None:
    store = SettingsStore(home.settings_file)
    settings = store.load()
    assert settings.relay_port == 23001 and settings.mcp_port == 23002
    assert settings.host == "127.0.0.1"
    assert settings.tab_scope == "all"
    assert not home.settings_file.exists()
    assert store.problems == []


def test_update_writes_json_with_a_schema_version_and_bumps_the_revision(home: Paths) -> None:
    store = SettingsStore(home.settings_file)
    store.update(lambda s: setattr(s, "relay_port", 24001))
    store.update(lambda s: setattr(s, "approval_timeout", 30.0))
    raw = json.loads(home.settings_file.read_text())
    assert raw["schema_version"] == SCHEMA_VERSION
    assert raw["relay_port"] == 24001 and raw["approval_timeout"] == 30.0
    assert raw["revision"] == 2
    assert stat.S_IMODE(home.settings_file.stat().st_mode) == 0o600
    assert SettingsStore(home.settings_file).load().relay_port == 24001


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "must be a JSON object"),
        ('{"relay_port": "many"}', "invalid setting relay_port"),
        ('{"relay_port": 70000}', "invalid setting relay_port"),
        ('{"tab_scope": "everything"}', "invalid setting tab_scope"),
        ('{"paired_extensions": [{"id": "short"}]}', "pairings.0.extension_id"),
        ('{"schema_version": 2, "pairings": [{"id": "b-1", "extension_id": "x"}]}', "pairings.0"),
        ('{"schema_version": 99}', "newer Tabrelay"),
        ('{"schema_version": "one"}', "no valid schema_version"),
    ],
)
def test_a_bad_file_is_kept_aside_with_a_visible_message(
    home: Paths, content: str, reason: str
) -> None:
    home.config_dir.mkdir(parents=True)
    home.settings_file.write_text(content)
    store = SettingsStore(home.settings_file)
    settings = store.load()
    assert settings == Settings()
    [problem] = store.problems
    assert reason in problem and "defaults are in use" in problem
    [bad] = list(home.config_dir.glob("settings.json.*.bad"))
    assert bad.read_text() == content  # nothing lost
    assert not home.settings_file.exists()


def test_invalid_change_is_refused_and_nothing_is_written(home: Paths) -> None:
    store = SettingsStore(home.settings_file)
    store.update(lambda s: setattr(s, "relay_port", 24001))
    before = home.settings_file.read_bytes()

    def break_it(settings: Settings) -> None:
        settings.__dict__["mcp_port"] = -5  # bypass assignment validation, as buggy code might

    with pytest.raises(SettingsError, match="refusing to save invalid settings"):
        store.update(break_it)
    assert home.settings_file.read_bytes() == before


def test_version_1_paired_extensions_become_pairings_on_the_shared_token() -> None:
    paired = "a" * 32
    settings = parse_settings(
        f'{{"schema_version": 1, "paired_extensions": [{{"id": "{paired}", "paired_at": 5}}]}}'
    )
    [pairing] = settings.pairings
    assert pairing.extension_id == paired and pairing.paired_at == 5 and pairing.legacy
    assert settings.schema_version == SCHEMA_VERSION and settings.is_paired(paired)


def test_unknown_keys_from_a_newer_minor_version_are_ignored() -> None:
    settings = parse_settings('{"schema_version": 1, "relay_port": 1234, "future_thing": true}')
    assert settings.relay_port == 1234


def test_migrations_run_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tabrelay.config.settings.SCHEMA_VERSION", 3)

    def rename_port(raw: dict[str, object]) -> dict[str, object]:
        raw["relay_port"] = raw.pop("port")
        return raw

    monkeypatch.setitem(MIGRATIONS, 1, rename_port)
    monkeypatch.setitem(MIGRATIONS, 2, lambda raw: {**raw, "mcp_port": raw["relay_port"] + 1})
    assert migrate({"schema_version": 1, "port": 5000}) == {
        "schema_version": 3,
        "relay_port": 5000,
        "mcp_port": 5001,
    }


def test_changes_from_another_process_are_noticed(home: Paths) -> None:
    mine = SettingsStore(home.settings_file)
    mine.load()
    assert mine.refresh() is None
    SettingsStore(home.settings_file).update(
        lambda s: s.pairings.append(PairedBrowser(id="b-1234", extension_id="a" * 32))
    )
    changed = mine.refresh()
    assert changed is not None and changed.is_paired("a" * 32)
    assert mine.refresh() is None


def _add_clients(path: str, prefix: str, count: int) -> None:
    from tabrelay.config.settings import McpClient

    store = SettingsStore(Path(path))
    for i in range(count):
        store.update(lambda s, i=i: s.clients.append(McpClient(name=f"{prefix}{i}")))


def test_concurrent_writers_in_separate_processes_lose_nothing(home: Paths) -> None:
    home.config_dir.mkdir(parents=True)
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_add_clients, args=(str(home.settings_file), p, 15))
        for p in ("a", "b", "c")
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    names = {c.name for c in SettingsStore(home.settings_file).load().clients}
    assert names == {f"{p}{i}" for p in "abc" for i in range(15)}
    leftovers = [p for p in os.listdir(home.config_dir) if p.endswith(".tmp")]
    assert leftovers == []


def test_unwritable_directory_gives_a_clear_error(home: Paths, tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    store = SettingsStore(blocker / "settings.json")
    with pytest.raises(Exception, match=r"File exists|Not a directory"):
        store.update(lambda s: None)
