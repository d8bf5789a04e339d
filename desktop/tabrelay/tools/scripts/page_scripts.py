"""Scripts several tools run in the page, kept in one place so each rule has one definition.

Plain JavaScript text, no I/O: ``EACH_ROOT`` (what "the whole page" means), ``FIELD_KIND`` (which
fields hold a secret), ``LABELS_OF`` (a field's labels) and ``QUERY`` (a CSS selector, through
open shadow roots). The tools that run them say how (an expression, a function on an element)
and what they do with the answer.
"""

from __future__ import annotations

from tabrelay.tools.scripts import script

# ``eachRoot(root, visit)``: calls ``visit`` on ``root``, then on every open shadow root and
# same-origin frame document inside it, depth first: what "the whole page" means to a page script.
EACH_ROOT = script("each_root.js")

# What kind of secret a form control takes, or null: password fields (also once a "show
# password" toggle made them type=text: their autocomplete stays), one-time codes, card details
# (WHATWG HTML autofill field names). One definition for the pre-approval check, locate(), the
# snapshot's masking and browser_get_content.
FIELD_KIND = script("field_kind.js")

# ``labelsOf(field)``: a field's <label>s in tree order, each tree looked through once by the
# script that made it (``(LABELS_OF)()``, one per read): the outline and the locators read
# every field's.
LABELS_OF = script("labels_of.js")

# Finds an element by CSS selector in the document and, failing that, in open shadow roots;
# ":focus" is the element keys go to (the focused one, the window focused or not).
QUERY = script("query.js")

# ``pathOf(el)``: where an element is, as JSON a script in another world (or that world at
# another time) follows back to it (``editors.EDITORS_AT``): from the top document down, an
# index among the child elements, 's' into a shadow root, 'f' into a same-origin frame's
# document; null for an element not in the page.
PATH_OF = script("path_of.js")

# ``dom``: reads of the DOM a page cannot change (a form's controls named like its properties
# stand in for them when read on the form, even in Tabrelay's world): ``dom.tag(el)``,
# ``dom.kids(node)``, ``dom.up(node)``, ``dom.attr(el, name)``, … for every walk that may meet a
# form.
SAFE_DOM = script("dom.js")

# ``sight(dom)``: whether a sighted person can see an element or a text, for the reading
# tools (issue 25: text a person cannot see is the classic carrier of prompt injection). Walked
# from the root down: ``sight.of(el, style, above)`` is the element's state given its parent's
# (``sight.root(doc)`` for a document's), ``state.own`` why the element itself is not seen and
# ``state.why`` why nothing inside it is (null: seen); ``sight.text(node, parent, state)`` why a
# text node is not seen, ``sight.value(field, state, style)`` why what a field holds is not.
# Reasons are short words for the snapshot's note. Not drawn now is not seen (a collapsed
# accordion's text too: the agent opens it as a person would), except what only waits for the
# person to move: scrolled away inside a scroller or the page, under a fixed header or a
# modal's backdrop. What is covered is known only on screen. ``sight.style(el)`` is the one
# computed style per element for the whole read; ``sight.withhold(why)`` counts a text left out
# (``sight.withheld``, by why; ``sight.count()``, in all). It reads elements through the
# ``dom`` (``SAFE_DOM``) of the script that makes it.
SIGHT = script("sight.js")


def withheld_note(withheld: dict[str, int]) -> str:
    """What the reading left out because a sighted person cannot see it, and why."""
    reasons = ", ".join(f"{n} {why}" for why, n in sorted(withheld.items(), key=lambda w: -w[1]))
    total = sum(withheld.values())
    return (
        f"(left out {total} text{'s' if total != 1 else ''} a sighted person cannot see: {reasons})"
    )
