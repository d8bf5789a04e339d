"""The core applies every settings snapshot truly: the navigation guard follows each change
even when a new snapshot lands where a freed one lived, and a revocation the relay could not
carry out is tried again rather than marked done."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from support.harness import RelayHarness
from tabrelay.config.settings import Settings
from tabrelay.errors import NavigationBlocked

CHANGES = 300


def _block(site: str) -> Callable[[Settings], None]:
    def change(settings: Settings) -> None:
        settings.navigation.block.append(site)

    return change


async def test_every_block_list_change_is_in_force_even_at_a_reused_address(
    relay: RelayHarness,
) -> None:
    """Two changes with no decision between them free the snapshot the guard was made for;
    CPython hands its address to a later snapshot. The guard must still see the newest list."""
    core = relay.core
    core.guard().check("https://example.com/")
    seen: set[int] = {id(core.settings)}
    reused = 0
    for n in range(CHANGES):
        # No await between the changes: the applier does not run and nothing else decides.
        core.settings_store.update(_block(f"first-{n}.example"))
        core.settings_store.update(_block(f"second-{n}.example"))
        reused += id(core.settings) in seen
        seen.add(id(core.settings))
        for site in (f"first-{n}.example", f"second-{n}.example"):
            with pytest.raises(NavigationBlocked):
                core.guard().check(f"https://{site}/")
    assert reused, "no snapshot reused a freed address: the test proved nothing"
