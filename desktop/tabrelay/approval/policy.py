"""The approval policy of DESIGN §6: (client, tool, site) → allow, ask or deny. Pure; no I/O.

Rules come from the settings (typed by the person with ``tabrelay policy set`` or made
"always" in the dialog) and from the running session ("allow for the session"). The most
specific matching rule wins — a named tool beats ``*``, then a named site, then a named
client — and among equally specific rules the strictest wins, so ties fail closed. Without a
matching rule, the defaults decide: read-only tools allow, everything else asks.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from tabrelay.config.settings import PolicyRule
from tabrelay.protocol.urls import InvalidUrl, parse_url, site_origin
from tabrelay.tools.catalog import TOOLS

Decision = Literal["allow", "ask", "deny"]
DECISIONS: tuple[Decision, ...] = ("allow", "ask", "deny")
ANY_TOOL = "*"

# The catalog says which tools only read (its ``read_only``, also each tool's MCP annotation):
# the one truth of what the defaults allow.
READ_ONLY_TOOLS: frozenset[str] = frozenset(spec.name for spec in TOOLS if spec.read_only)
# Tools whose power is too broad for a standing grant from a dialog (the catalog's ``always``):
# "always" is never offered.
NEVER_ALWAYS_TOOLS: frozenset[str] = frozenset(spec.name for spec in TOOLS if not spec.always)
_STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: Decision
    rule: PolicyRule | None  # None: the default decided

    def describe(self) -> str:
        if self.rule is None:
            return f"default ({self.decision})"
        return describe_rule(self.rule)


def default_decision(tool: str) -> Decision:
    return "allow" if tool in READ_ONLY_TOOLS else "ask"


def offers_always(tool: str) -> bool:
    """Whether the approval dialog may offer "Always allow this tool on this site"."""
    return tool not in NEVER_ALWAYS_TOOLS


def normalize_origin(origin: str) -> str:
    """The form rules and tabs are compared in.

    An http(s) origin is read as the browser reads it, its host as a site, so
    ``HTTPS://EXAMPLE.com./``, ``https://example.com:443`` and ``https://example.com`` are
    one, and an IDN is its Punycode. Anything else is lower-cased without a trailing slash.
    """
    try:
        url = parse_url(origin)
        if (
            url.scheme in ("http", "https")
            and not url.has_credentials
            and (url.path, url.query, url.fragment) == ("/", None, None)
        ):
            return site_origin(url)
    except InvalidUrl:
        pass  # not an origin: compared as written, so it matches no tab
    origin = origin.strip().rstrip("/")
    scheme, sep, rest = origin.partition("://")
    return f"{scheme.lower()}{sep}{rest.lower()}" if sep else origin.lower()


def matches(rule: PolicyRule, *, client: str, tool: str, origin: str | None, now: float) -> bool:
    if rule.expires_at is not None and rule.expires_at <= now:
        return False
    if rule.tool not in (ANY_TOOL, tool):
        return False
    if rule.site is not None and (origin is None or normalize_origin(rule.site) != origin):
        return False
    return rule.client is None or rule.client == client


def specificity(rule: PolicyRule) -> tuple[int, int]:
    score = 4 * (rule.tool != ANY_TOOL) + 2 * (rule.site is not None) + (rule.client is not None)
    return score, _STRICTNESS[rule.decision]


def evaluate(
    rules: Iterable[PolicyRule],
    *,
    client: str,
    tool: str,
    origin: str | None,
    now: float | None = None,
) -> Verdict:
    """Decide one call. ``origin`` is the tab's real origin (``None`` when no tab is involved)."""
    now = time.time() if now is None else now
    site = normalize_origin(origin) if origin else None
    candidates = [r for r in rules if matches(r, client=client, tool=tool, origin=site, now=now)]
    if not candidates:
        return Verdict(default_decision(tool), None)
    best = max(candidates, key=specificity)
    return Verdict(best.decision, best)


def describe_rule(rule: PolicyRule) -> str:
    parts = [f"{rule.decision} {rule.tool}"]
    if rule.site:
        parts.append(f"on {rule.site}")
    if rule.client:
        parts.append(f"for {rule.client}")
    if rule.expires_at is not None:
        parts.append(f"until {time.strftime('%Y-%m-%d %H:%M', time.localtime(rule.expires_at))}")
    return " ".join(parts)
