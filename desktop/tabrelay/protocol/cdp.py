"""The CDP method denylist (DESIGN §4.7), enforced by the app and again by the extension.

Cookie dumps, download, permission and credential tampering, and ``Target.*`` escapes out of
the tab are never sent, whoever asks (``Target.setAutoAttach`` alone is let through: it reaches
only the tab's own frames in other processes). The extension's copy lives in
``extension/src/shared/denylist.js``; a test keeps the two equal.
"""

from __future__ import annotations

import re

# Whole domains that reach outside the tab or into the browser's secrets.
BLOCKED_CDP_DOMAINS: frozenset[str] = frozenset(
    {"Target", "Browser", "WebAuthn", "SystemInfo", "Tethering", "Cast", "Extensions", "PWA"}
)

# The one method of a blocked domain that stays within the tab: auto-attaching to the tab's own
# frames that run in other processes (cross-site frames), each reached through a child session.
# The extension lets it through with those params alone (iframes only, flat, not waiting:
# ``autoAttachBlockReason`` in denylist.js), never for the page's workers or service worker.
ALLOWED_IN_BLOCKED_DOMAINS: frozenset[str] = frozenset({"Target.setAutoAttach"})

BLOCKED_CDP_METHODS: frozenset[str] = frozenset(
    {
        # cookies: read or write the jar beyond what the page itself can see
        "Network.getAllCookies",
        "Network.getCookies",
        "Network.setCookie",
        "Network.setCookies",
        "Network.deleteCookies",
        "Network.clearBrowserCookies",
        "Storage.getCookies",
        "Storage.setCookies",
        "Storage.clearCookies",
        "Storage.clearDataForOrigin",
        "Storage.clearDataForStorageKey",
        "Page.getCookies",
        # downloads, permissions, credentials
        "Page.setDownloadBehavior",
        "Fetch.continueWithAuth",
        "Network.setUserAgentOverride",
        "Security.setIgnoreCertificateErrors",
        "Security.handleCertificateError",
        "Security.setOverrideCertificateErrors",
        # escapes into other processes and targets
        "Page.crash",
        "Runtime.terminateExecution",
        "ServiceWorker.deliverPushMessage",
        "ServiceWorker.dispatchSyncEvent",
        "ServiceWorker.dispatchPeriodicSyncEvent",
    }
)

_METHOD_SYNTAX = re.compile(r"^[A-Z][A-Za-z0-9]*\.[a-z][A-Za-z0-9]*$")


def cdp_block_reason(method: str) -> str | None:
    """Why ``method`` may not be sent, or ``None`` when it may."""
    if not _METHOD_SYNTAX.fullmatch(method):  # fullmatch: "$" alone accepts a final "\n"
        return f"'{method[:80]}' is not a CDP method name (Domain.method)"
    domain = method.split(".", 1)[0]
    if domain in BLOCKED_CDP_DOMAINS and method not in ALLOWED_IN_BLOCKED_DOMAINS:
        return f"the CDP domain {domain} is blocked by Tabrelay"
    if method in BLOCKED_CDP_METHODS:
        return f"the CDP method {method} is blocked by Tabrelay"
    return None
