"""Which fields of a page hold a secret, for the snapshot to leave their values out.

The rule is ``page_scripts.FIELD_KIND`` (passwords, also once a "show password" toggle made
them text, fields drawn as dots, one-time codes, card details), the one ``browser_get_content``
and the typing tools use, run in the page over the document, its open shadow roots and
same-origin frames. Only fields that hold something are looked up: an empty one shows nothing
anyway. A look the page breaks fails closed: the snapshot then shows no field's value.
"""

from __future__ import annotations

import logging

from tabrelay.tools.context import ToolContext
from tabrelay.tools.page_scripts import EACH_ROOT, FIELD_KIND

# An array of the secret fields that hold a value, carrying their kinds alongside; or null.
_FIND = r"""
(() => {
  const kindOf = FIELD_KIND;
  const fields = [], kinds = [];
  EACH_ROOT
  eachRoot(document, (root) => {
    for (const el of root.querySelectorAll('input, textarea, select')) {
      const kind = el.value ? kindOf(el) : null;
      if (kind) { fields.push(el); kinds.push(kind); }
    }
  });
  if (!fields.length) return null;
  fields.kinds = kinds;
  return fields;
})()
""".replace("FIELD_KIND", FIELD_KIND.strip()).replace("EACH_ROOT", EACH_ROOT.strip())

logger = logging.getLogger(__name__)


async def secret_fields(ctx: ToolContext) -> dict[int, str] | None:
    """The kind of secret ("password", "one-time code", "card detail") of each field that holds
    one, by backend node id; ``None`` when the page kept the look from finishing (a script
    error its own code can cause): then no field's value may be shown (fail closed).

    One round trip when no such field holds anything (most pages); otherwise three more,
    whatever their number. The objects live in the call's object group (released when the
    call ends).

    Raises:
        CommandFailed: the page could not be read (between documents): the snapshot cannot
            say which values to leave out, so it is not taken.
    """
    found = await ctx.page_elements(_FIND, facts="kinds")
    if found.failed is not None:
        logger.info("could not tell which fields hold secrets: %s", found.failed)
        return None
    if not found.nodes:
        return {}
    kinds = found.facts
    if not isinstance(kinds, list) or len(kinds) != len(found.nodes):
        return None  # the page reshaped what the look returned: it cannot be trusted
    return {node: str(kinds[i]) for i, node in found.nodes.items()}
