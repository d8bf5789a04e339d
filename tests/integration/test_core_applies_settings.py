"""The core applies every settings snapshot truly: the navigation guard follows each change
even when a new snapshot lands where a freed one lived, and a revocation the relay could not
carry out is tried again rather than marked done."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from support.fake_extension import EXTENSION_ID
from support.harness import RelayHarness
from tabrelay.config.settings import Settings, SettingsStore
from tabrelay.errors import NavigationBlocked
from tabrelay.protocol.constants import CloseCode
from tabrelay.relay.pairing import Pairing

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


async def test_a_revoke_whose_secrets_cannot_be_read_still_closes_the_browser_and_is_retried(
    relay: RelayHarness,
) -> None:
    """The revoke lands while the secret file is unreadable: loading the secrets fails, yet the
    unpaired browser is closed, the change is not claimed applied, and once the file reads
    again the app applies it without another change."""
    unpaired = await relay.extension(instance="first")
    await relay.pair()  # a second pairing stays, so loading the secrets reads the file
    [pairing_id] = [b.pairing_id for b in relay.core.registry.all()]
    assert pairing_id is not None
    secrets = relay.paths.secrets_file
    # As `tabrelay pair revoke` does, then the file breaks before the app applies it: no await
    # between, so the applier meets the broken file.
    Pairing(SettingsStore(relay.paths.settings_file), relay.tokens).revoke(pairing_id)
    readable = secrets.read_bytes()
    secrets.write_text("{ not json", encoding="utf-8")
    assert await unpaired.wait_closed(3) == CloseCode.NOT_PAIRED
    with pytest.raises(TimeoutError):  # never "applied" while it is not
        await relay.core.settled(timeout=0.5)
    secrets.write_bytes(readable)
    await relay.core.settled(timeout=5)
    assert [p for p, _ in relay.core.credentials_for(EXTENSION_ID)] == [
        p.id for p in relay.core.settings.pairings
    ]
