"""The settings owner: immutable snapshots, one way in for every change, published in order,
and a bad file that never costs the settings in force."""

from __future__ import annotations

import copy
import json
import threading

import pytest

from tabrelay.config.paths import Paths
from tabrelay.config.settings import (
    FrozenSettingsError,
    McpClient,
    PairedBrowser,
    PolicyRule,
    Settings,
    SettingsStore,
)

EXTENSION = "a" * 32


def _allow_all(settings: Settings) -> None:
    settings.policy_rules.append(PolicyRule(tool="*", decision="allow"))
    settings.pairings.append(PairedBrowser(id="b-0001", extension_id=EXTENSION))


def test_the_snapshot_in_force_cannot_be_changed_in_place(home: Paths) -> None:
    store = SettingsStore(home.settings_file)
    store.update(_allow_all)
    snapshot = store.current
    attempts = [
        lambda: setattr(snapshot, "relay_port", 1),
        lambda: delattr(snapshot, "relay_port"),
        lambda: snapshot.policy_rules.append(PolicyRule(tool="x", decision="deny")),
        lambda: snapshot.policy_rules.clear(),
        lambda: snapshot.pairings.pop(),
        lambda: snapshot.pairings.__setitem__(0, snapshot.pairings[0]),
        lambda: snapshot.navigation.allow.append("https://evil.example"),
        lambda: setattr(snapshot.navigation, "only_allowed", True),
        lambda: setattr(snapshot.pairings[0], "label", "changed"),
        lambda: setattr(snapshot.policy_rules[0], "decision", "deny"),
    ]
    for attempt in attempts:
        with pytest.raises(FrozenSettingsError, match=r"SettingsStore\.update"):
            attempt()
    assert store.current.relay_port == 23001
    assert [r.decision for r in store.current.policy_rules] == ["allow"]
    assert store.current.pairings[0].label == ""


def test_a_copy_of_a_snapshot_is_a_draft_that_leaves_the_snapshot_alone(home: Paths) -> None:
    store = SettingsStore(home.settings_file)
    store.update(_allow_all)
    for draft in (copy.deepcopy(store.current), store.current.model_copy()):
        draft.policy_rules.append(PolicyRule(tool="y", decision="deny"))
        draft.pairings[0].label = "a draft"
        draft.relay_port = 5
    rule = store.current.policy_rules[0].model_copy(update={"decision": "deny"})
    assert rule.decision == "deny"
    assert len(store.current.policy_rules) == 1 and store.current.relay_port == 23001
    assert store.current.pairings[0].label == ""


def test_each_change_is_published_once_in_order_and_an_own_write_is_not_read_back(
    home: Paths,
) -> None:
    store = SettingsStore(home.settings_file)
    seen: list[int] = []
    unsubscribe = store.subscribe(lambda s: seen.append(s.relay_port))
    store.load()
    for port in (24001, 24002, 24003):
        store.update(lambda s, port=port: setattr(s, "relay_port", port))
    assert store.refresh() is None, "its own writes are not a foreign change"
    SettingsStore(home.settings_file).update(lambda s: setattr(s, "relay_port", 24004))
    assert store.refresh() is not None
    assert store.refresh() is None
    unsubscribe()
    store.update(lambda s: setattr(s, "relay_port", 24005))
    assert seen == [23001, 24001, 24002, 24003, 24004]
    assert store.current.relay_port == 24005


def test_a_change_is_called_exactly_once_so_it_may_count_and_collect(home: Paths) -> None:
    """What callers rely on (``Pairing.revoke`` collects what it removed in its change)."""
    store = SettingsStore(home.settings_file)
    store.load()
    calls: list[int] = []

    def change(settings: Settings) -> None:
        calls.append(settings.revision)
        settings.relay_port += 1

    store.update(change)
    SettingsStore(home.settings_file).update(change)  # another process wrote meanwhile
    store.update(change)
    assert len(calls) == 3
    assert store.current.relay_port == 23001 + 3


def test_changes_from_many_threads_lose_nothing_and_publish_in_the_order_they_landed(
    home: Paths,
) -> None:
    store = SettingsStore(home.settings_file)
    store.load()
    revisions: list[int] = []
    store.subscribe(lambda s: revisions.append(s.revision))

    def add(prefix: str) -> None:
        for i in range(10):
            store.update(lambda s, i=i: s.clients.append(McpClient(name=f"{prefix}{i}")))

    workers = [threading.Thread(target=add, args=(p,)) for p in "abcd"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert {c.name for c in store.current.clients} == {f"{p}{i}" for p in "abcd" for i in range(10)}
    assert revisions == list(range(1, 41)), "one snapshot per change, never out of order"


def test_a_failing_subscriber_does_not_undo_a_change_nor_keep_it_from_the_others(
    home: Paths,
) -> None:
    store = SettingsStore(home.settings_file)
    seen: list[int] = []

    def broken(_settings: Settings) -> None:
        raise RuntimeError("a subscriber bug")

    store.subscribe(broken)
    store.subscribe(lambda s: seen.append(s.relay_port))
    store.update(lambda s: setattr(s, "relay_port", 24001))
    assert seen == [24001]
    assert SettingsStore(home.settings_file).load().relay_port == 24001


@pytest.mark.parametrize(
    "content",
    [
        "garbage \x00\xff",
        '{"schema_version": 2, "relay_port": 24001, "policy_rules": [{"tool": "*", "dec',
        '{"relay_port": "many"}',
        "",
    ],
    ids=["garbage", "partial-write", "invalid", "empty"],
)
def test_a_bad_file_while_running_keeps_the_settings_in_force_and_says_so(
    home: Paths, content: str
) -> None:
    store = SettingsStore(home.settings_file)
    store.update(_allow_all)
    good = store.current
    published: list[Settings] = []
    store.subscribe(published.append)
    home.settings_file.write_text(content)  # in place, not atomic: as a careless editor would
    assert store.refresh() is good
    assert store.current is good and store.current.policy_rules[0].tool == "*"
    [problem] = store.problems
    assert "the settings in force are kept" in problem
    [bad] = list(home.config_dir.glob("settings.json.*.bad"))
    assert bad.read_text() == content, "nothing of the bad file is lost"
    # The file holds the settings in force again, for the command line to read.
    assert SettingsStore(home.settings_file).load() == good
    assert published == [good], "the UI hears of the problem"
    assert store.refresh() is None, "reported once, not on every look"


def test_a_change_made_over_a_bad_file_builds_on_the_settings_in_force(home: Paths) -> None:
    store = SettingsStore(home.settings_file)
    store.update(_allow_all)
    home.settings_file.write_text("{not json")
    store.update(lambda s: setattr(s, "approval_timeout", 30.0))
    on_disk = json.loads(home.settings_file.read_text())
    assert on_disk["approval_timeout"] == 30.0
    assert on_disk["policy_rules"][0]["tool"] == "*", "a bad file never resets the settings"
    assert len(store.problems) == 1


def test_files_that_still_carry_autostart_read_fine_and_drop_it_on_the_next_write(
    home: Paths,
) -> None:
    home.config_dir.mkdir(parents=True)
    home.settings_file.write_text('{"schema_version": 2, "autostart": true, "relay_port": 24001}')
    store = SettingsStore(home.settings_file)
    assert store.load().relay_port == 24001 and store.problems == []
    store.update(lambda s: setattr(s, "mcp_port", 24002))
    assert "autostart" not in json.loads(home.settings_file.read_text())
