"""What an action led to, from the tab's events (tools/acting/aftermath.py), and how an
acting tool's answer says it."""

from __future__ import annotations

from typing import Any

from tabrelay.relay.events import HubEvent
from tabrelay.tools.acting.aftermath import Aftermath, Followed
from tabrelay.tools.results import plain

TAB = 7
MAIN = "MAINFRAME"


def cdp(method: str, tab: int = TAB, **params: Any) -> HubEvent:
    return HubEvent("cdp", "b1", method, tab, params)


def tab_event(kind: str, tab: int, **params: Any) -> HubEvent:
    return HubEvent("tab", "b1", kind, tab, params)


def fed(*events: HubEvent) -> Aftermath:
    after = Aftermath(TAB, MAIN)
    for event in events:
        after.feed(event)
    return after


def navigated(url: str, frame: str = MAIN, parent: str | None = None) -> HubEvent:
    frame_info: dict[str, Any] = {"id": frame, "url": url}
    if parent:
        frame_info["parentId"] = parent
    return cdp("Page.frameNavigated", frame=frame_info, type="Navigation")


def test_a_submitted_form_is_under_way_until_the_new_page_loads() -> None:
    after = fed(cdp("Page.frameRequestedNavigation", frameId=MAIN, url="http://x/r?q=a"))
    assert after.started and not after.settled and not after.moved
    after.feed(navigated("http://x/r?q=a"))
    assert after.committed and after.moved and not after.settled
    after.feed(cdp("Page.domContentEventFired", timestamp=1))
    assert after.content_loaded and not after.settled
    after.feed(cdp("Page.loadEventFired", timestamp=2))
    assert after.loaded and after.settled and after.url == "http://x/r?q=a"


def test_events_of_other_tabs_and_frames_loading_by_themselves_are_not_the_actions() -> None:
    after = fed(
        navigated("http://ad/", frame="CHILD", parent=MAIN),  # not asked for during the action
        cdp("Page.frameRequestedNavigation", tab=8, frameId=MAIN, url="http://y/"),
        cdp("Page.loadEventFired"),
    )
    assert not after.started and not after.moved and after.settled and not after.frames


def test_a_navigation_that_opens_no_page_ends_as_failed() -> None:
    after = fed(
        cdp("Page.frameStartedNavigating", frameId=MAIN, url="http://x/file.zip"),
        cdp("Page.frameStoppedLoading", frameId=MAIN),
    )
    assert after.failed and after.settled and not after.moved
    note = plain(Followed(after, url="http://x/", title="Shop").note())
    assert note.startswith("It started a navigation to http://x/file.zip that did not open a page")
    assert 'the tab still shows "Shop" at http://x/' in note


def test_a_route_in_the_page_moves_without_a_new_document() -> None:
    after = fed(
        cdp("Page.frameRequestedNavigation", frameId=MAIN, url="http://x/#top"),
        cdp("Page.navigatedWithinDocument", frameId=MAIN, url="http://x/#top"),
    )
    assert after.same_document and after.moved and after.settled and not after.committed
    followed = Followed(after, url="http://x/#top", title="Top")
    assert plain(followed.note()) == (
        'The page moved to "Top" at http://x/#top without loading a new one; take a new '
        "snapshot to see what changed."
    )
    assert followed.data() == {"navigated": True, "url": "http://x/#top", "title": "Top"}


def test_a_new_tab_is_named_once_it_has_an_address() -> None:
    after = fed(cdp("Page.windowOpen", url="http://x/r?q=blank", userGesture=True))
    assert after.opening == 1 and not after.named_tabs
    after.feed(tab_event("created", 9, openerTabId=TAB, url=""))
    assert after.opened == {9: ""} and not after.named_tabs
    after.feed(tab_event("created", 10, url="http://elsewhere/"))  # not opened by this tab
    # A tab this one opened long ago (Chrome keeps openerTabId for life) that merely changes
    # meanwhile was not opened by the action: it must not become the agent's (review).
    after.feed(tab_event("updated", 4, openerTabId=TAB, url="https://mail.example/inbox"))
    assert 4 not in after.opened
    after.feed(tab_event("updated", 9, openerTabId=TAB, url="http://x/r?q=blank"))
    assert after.opened == {9: "http://x/r?q=blank"} and after.named_tabs
    followed = Followed(after)
    assert plain(followed.note()) == (
        "It opened a new tab 9 (http://x/r?q=blank); pass tab_id=9 to use it."
    )
    assert followed.data() == {
        "navigated": False,
        "new_tabs": [{"tab_id": 9, "url": "http://x/r?q=blank"}],
    }


def test_requests_the_action_sent_are_followed_until_answered() -> None:
    after = fed(
        cdp("Network.requestWillBeSent", requestId="1", type="Fetch", frameId=MAIN),
        cdp("Network.requestWillBeSent", requestId="2", type="Image", frameId=MAIN),
        cdp("Network.requestWillBeSent", requestId="3", type="XHR", frameId=MAIN),
    )
    assert after.requests == {"1", "3"}
    after.feed(cdp("Network.loadingFinished", requestId="1"))
    after.feed(cdp("Network.loadingFailed", requestId="3"))
    assert after.requests == set()


def test_a_page_still_loading_when_the_wait_ends_says_how_to_go_on() -> None:
    after = fed(
        cdp("Page.frameRequestedNavigation", frameId=MAIN, url="http://x/slow"),
        navigated("http://x/slow"),
    )
    followed = Followed(after, url="http://x/slow", title="")
    assert "still loading after 10 s" in plain(followed.note())
    assert "browser_wait_for load_state='load'" in plain(followed.note())
    assert followed.data() == {"navigated": True, "url": "http://x/slow", "title": "",
                               "loading": True}  # fmt: skip
    waiting = Followed(fed(cdp("Page.frameStartedNavigating", frameId=MAIN, url="http://x/s")))
    assert plain(waiting.note()).startswith("It started loading http://x/s, which had not answered")


def test_a_tab_the_page_closed_is_said_and_ends_the_wait() -> None:
    after = fed(tab_event("removed", TAB))
    assert after.closed and after.settled
    assert plain(Followed(after).note()) == "The page closed its tab."
    assert Followed(after).data() == {"navigated": False, "tab_closed": True}


def test_an_action_that_changed_nothing_adds_nothing() -> None:
    followed = Followed(fed())
    assert plain(followed.note()) == ""
    assert followed.data() == {"navigated": False}


def test_a_window_the_page_asked_for_that_never_came_is_said() -> None:
    after = fed(cdp("Page.windowOpen", url="http://x/ad", userGesture=False))
    assert plain(Followed(after).note()) == (
        "The page asked for a new window that did not open (the browser may have blocked it as "
        "a pop-up)."
    )


def test_a_frame_that_loads_another_page_is_waited_for_and_said() -> None:
    after = fed(
        cdp("Page.frameRequestedNavigation", frameId="CHILD", url="http://x/q?sql=1"),
        navigated("http://x/q?sql=1", frame="CHILD", parent=MAIN),
    )
    assert not after.moved and after.frames_loading == {"CHILD"} and not after.settled
    after.feed(cdp("Page.frameStoppedLoading", frameId="CHILD"))
    assert after.settled
    followed = Followed(after, url="http://x/", title="Editors")
    assert plain(followed.note()) == (
        "A frame in the page now shows http://x/q?sql=1; take a new snapshot, its old refs no "
        "longer work."
    )
    assert followed.data() == {
        "navigated": False, "url": "http://x/", "title": "Editors", "frames": ["http://x/q?sql=1"],
    }  # fmt: skip
