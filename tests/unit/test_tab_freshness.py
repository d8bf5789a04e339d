"""Which cached tabs are known current (``relay/freshness.py``): pure bookkeeping, so every
interleaving of commands, answers and events can be written out. The case added here: an
answer that carries its tab, read by the extension once the command ended there."""

from __future__ import annotations

from tabrelay.relay.freshness import EVERY_TAB, TabFreshness

TAB, OTHER = 1, 2


def told_by_event() -> TabFreshness:
    fresh = TabFreshness(events=True)
    fresh.heard(TAB)
    fresh.heard(OTHER)
    assert fresh.current(TAB)
    return fresh


def test_a_command_alone_on_its_tab_whose_answer_carries_it_leaves_the_tab_current() -> None:
    fresh = told_by_event()
    sent = fresh.command_sent((TAB,))
    assert not fresh.current(TAB)
    fresh.command_ended((TAB,))
    assert fresh.carried(TAB, sent)
    assert fresh.current(TAB)


def test_without_a_carried_tab_a_command_leaves_its_tab_stale() -> None:
    fresh = told_by_event()
    fresh.command_sent((TAB,))
    fresh.command_ended((TAB,))
    assert not fresh.current(TAB)


def test_a_command_sent_while_another_was_in_flight_cannot_vouch_for_the_tab() -> None:
    """The other one may have acted after the extension's read, its answer arriving first."""
    fresh = told_by_event()
    first = fresh.command_sent((TAB,))
    second = fresh.command_sent((TAB,))
    fresh.command_ended((TAB,))  # the first's answer…
    assert not fresh.carried(TAB, first)  # …the second is still in flight
    fresh.command_ended((TAB,))
    assert not fresh.carried(TAB, second)  # the first was in flight when it left
    assert not fresh.current(TAB)


def test_a_command_sent_after_it_left_makes_its_carried_tab_count_for_nothing() -> None:
    fresh = told_by_event()
    first = fresh.command_sent((TAB,))
    fresh.command_ended((TAB,))
    later = fresh.command_sent((TAB,))
    assert not fresh.carried(TAB, first)  # answered late: a command left since
    fresh.command_ended((TAB,))
    assert fresh.carried(TAB, later)
    assert fresh.current(TAB)


def test_a_command_sent_later_but_answered_first_spoils_the_earlier_ones_carried_tab() -> None:
    fresh = told_by_event()
    first = fresh.command_sent((TAB,))
    later = fresh.command_sent((TAB,))
    fresh.command_ended((TAB,))  # the later one's answer, first
    fresh.command_ended((TAB,))
    assert not fresh.carried(TAB, first)  # the later one may have acted after its read
    assert not fresh.carried(TAB, later)  # the first was in flight when it left
    assert not fresh.current(TAB)


def test_a_command_to_every_tab_sent_while_it_ran_spoils_it() -> None:
    fresh = told_by_event()
    sent = fresh.command_sent((TAB,))
    fresh.command_sent((EVERY_TAB,))  # tabs.create, after it left
    fresh.command_ended((EVERY_TAB,))
    fresh.command_ended((TAB,))
    assert not fresh.carried(TAB, sent)
    assert not fresh.current(TAB)


def test_a_command_to_every_tab_in_flight_when_it_left_spoils_it() -> None:
    fresh = told_by_event()
    fresh.command_sent((EVERY_TAB,))
    sent = fresh.command_sent((TAB,))
    fresh.command_ended((EVERY_TAB,))
    fresh.command_ended((TAB,))
    assert not fresh.carried(TAB, sent)


def test_a_command_that_may_change_every_tab_spoils_it_too() -> None:
    fresh = told_by_event()
    sent = fresh.command_sent((TAB,))
    fresh.command_sent((EVERY_TAB,))  # tabs.create, in flight
    fresh.command_ended((TAB,))
    assert not fresh.carried(TAB, sent)
    fresh.command_ended((EVERY_TAB,))
    assert not fresh.current(TAB)
    alone_again = fresh.command_sent((TAB,))
    fresh.command_ended((TAB,))
    assert fresh.carried(TAB, alone_again)


def test_another_tabs_commands_do_not_matter() -> None:
    fresh = told_by_event()
    sent = fresh.command_sent((TAB,))
    fresh.command_sent((OTHER,))
    fresh.command_ended((TAB,))
    assert fresh.carried(TAB, sent)
    assert fresh.current(TAB) and not fresh.current(OTHER)


def test_a_browser_without_tab_events_never_has_a_current_tab() -> None:
    fresh = TabFreshness(events=False)
    sent = fresh.command_sent((TAB,))
    fresh.command_ended((TAB,))
    fresh.carried(TAB, sent)
    assert not fresh.current(TAB)
