"""Which fields of a page hold a secret, for the snapshot to leave their values out.

The rule is ``page_scripts.FIELD_KIND`` (passwords, also once a "show password" toggle made
them text, fields drawn as dots, one-time codes, card details), the one ``browser_get_content``
and the typing tools use, run in the page over the document, its open shadow roots and
same-origin frames as a look of ``page_looks`` (which runs it with the others in one walk).
Only fields that hold something are looked up: an empty one shows nothing anyway. A look the
page breaks fails closed: the snapshot then shows no field's value.
"""

from __future__ import annotations

import logging

from tabrelay.tools.context import PageElements
from tabrelay.tools.page_scripts import FIELD_KIND

# A look (``page_looks``): the secret fields that hold a value, with their kinds as facts.
LOOK = r"""
() => {
  const kindOf = FIELD_KIND;
  const elements = [], kinds = [];
  return {
    visit: (root) => {
      for (const el of root.querySelectorAll('input, textarea, select')) {
        const kind = el.value ? kindOf(el) : null;
        if (kind) { elements.push(el); kinds.push(kind); }
      }
    },
    found: () => ({elements, facts: kinds}),
  };
}
""".replace("FIELD_KIND", FIELD_KIND.strip())

logger = logging.getLogger(__name__)


def read_secrets(found: PageElements) -> dict[int, str] | None:
    """The kind of secret ("password", "one-time code", "card detail") of each field that holds
    one, by backend node id, from what ``LOOK`` found; ``None`` when the page kept the look
    from finishing (a script error its own code can cause): then no field's value may be shown
    (fail closed).
    """
    if found.failed is not None:
        logger.info("could not tell which fields hold secrets: %s", found.failed)
        return None
    kinds = found.facts
    if not found.nodes and not kinds:
        return {}
    if not isinstance(kinds, list) or len(kinds) != len(found.nodes):
        return None  # the page reshaped what the look returned: it cannot be trusted
    return {node: str(kinds[i]) for i, node in found.nodes.items()}
