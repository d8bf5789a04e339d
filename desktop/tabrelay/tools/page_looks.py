"""Looks over the whole page taken together: one walk over the document, its open shadow roots
and same-origin frames (``page_scripts.EACH_ROOT``) and one ``ToolContext.page_elements`` call
for several looks, each keeping its own failure.

A look is script text (``secret_fields.LOOK``, ``editor_text.LOOK``); what its answer means is
its own module's business. This module only runs looks and hands each its share of the answer.
"""

from __future__ import annotations

from tabrelay.tools.context import PageElements, ToolContext
from tabrelay.tools.page_scripts import EACH_ROOT

# Each look is ``() => ({visit(root), found()})``: ``visit`` is called on every root of the
# page (all of them before the next look starts, so no look's page code runs in the middle of
# another's), ``found()`` gives ``{elements, facts}``. Each look runs in its own try: a throw
# in one (the page's own code can cause it) is that look's failure alone. The answer is one
# array of every look's elements, in order, carrying ``looks``: per look ``{count, facts}`` or
# ``{failed}``; null when no look found anything and none failed (most pages: one round trip).
_RUN = r"""
(() => {
  EACH_ROOT
  const reason = (error) => {
    try { return String(error).slice(0, 200); } catch (e) { return 'a script error'; }
  };
  const roots = [];
  eachRoot(document, (root) => { roots.push(root); });
  const elements = [], looks = [];
  let failed = false;
  for (const make of [LOOKS]) {
    const start = elements.length;
    try {
      const look = make();
      for (const root of roots) look.visit(root);
      const found = look.found();
      for (const element of found.elements) elements.push(element);
      looks.push({count: elements.length - start, facts: found.facts});
    } catch (error) {
      elements.length = start;
      looks.push({failed: reason(error)});
      failed = true;
    }
  }
  if (!elements.length && !failed) return null;
  elements.looks = looks;
  return elements;
})()
""".replace("EACH_ROOT", EACH_ROOT.strip())


def script(*looks: str) -> str:
    """The one page script that runs ``looks`` together (an expression)."""
    return _RUN.replace("LOOKS", ",\n".join(f"({one.strip()})" for one in looks))


_RESHAPED = "the page reshaped what the look returned"


async def look(ctx: ToolContext, *looks: str) -> list[PageElements]:
    """Run ``looks`` over the page in one walk and one script; what each found, in order, as if
    it had been a ``page_elements`` call of its own (``failed`` set for a look that threw, or
    for every look when the walk itself did or the answer came back reshaped).

    One round trip when no look finds anything (most pages); otherwise three more, whatever
    their number. The objects live in the call's object group (released when the call ends).

    Raises:
        CommandFailed: the page could not be read (between documents, or gone).
    """
    found = await ctx.page_elements(script(*looks), facts="looks")
    if found.failed is not None:
        return [PageElements({}, failed=found.failed) for _ in looks]
    if found.facts is None and not found.nodes:
        return [PageElements({}) for _ in looks]
    return _shares(found, len(looks))


def _shares(found: PageElements, many: int) -> list[PageElements]:
    """Each look's share of one answer: its elements (indexed from 0) and facts."""
    answers = found.facts
    if not isinstance(answers, list) or len(answers) != many:
        return [PageElements({}, failed=_RESHAPED) for _ in range(many)]
    shares: list[PageElements] = []
    start = 0
    for answer in answers:
        if not isinstance(answer, dict):
            shares.append(PageElements({}, failed=_RESHAPED))
            continue
        if "failed" in answer:
            shares.append(PageElements({}, failed=str(answer["failed"])))
            continue
        count = answer.get("count")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            # Where the next look's elements start is unknown now: none can be trusted.
            return [PageElements({}, failed=_RESHAPED) for _ in range(many)]
        nodes = {i - start: n for i, n in found.nodes.items() if start <= i < start + count}
        shares.append(PageElements(nodes, answer.get("facts")))
        start += count
    if any(i >= start for i in found.nodes):
        return [PageElements({}, failed=_RESHAPED) for _ in range(many)]
    return shares
