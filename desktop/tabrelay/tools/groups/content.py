"""browser_get_content: a page (or one part of it) as text, markdown or HTML.

The part is a CSS selector or a ref from the snapshot (a line the snapshot shortened says which).
For text and markdown the page first serializes its visible content in the page, leaving out
boilerplate — navigation, headers and footers outside the article, asides, ads, cookie and consent
banners, scripts, styles — and including shadow roots (open and closed) and same-origin frames;
code editors give their whole text. A field read on its own gives what it holds now (never a
password's). Markdown comes from that HTML through ``markdownify``; HTML mode returns the markup as
it is. Long results end with a marker and the offset to continue from."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Literal

from pydantic import Field, model_validator

from tabrelay.errors import ToolError
from tabrelay.tools.acting import download
from tabrelay.tools.context import Reading, TabParams, ToolContext, ToolResult
from tabrelay.tools.page import child_sessions, editor_text, page_outline, pdf
from tabrelay.tools.page.refs import STALE, held_of, object_for
from tabrelay.tools.page.shadow_roots import open_closed_roots
from tabrelay.tools.results import page_text
from tabrelay.tools.scripts import script
from tabrelay.tools.scripts.editors import CODE_BOXES, EDITORS_AT
from tabrelay.tools.scripts.page_scripts import FIELD_KIND, QUERY, SAFE_DOM, SIGHT, withheld_note

# (root, mode, editors) => {html, withheld} | {value, code} | {secret} | {missing}: one element
# (or the body). Run in Tabrelay's world, where the page cannot redefine what it calls (how a
# style or a box is measured): ``editors`` are the code editors the page's world read
# (``editor_text``): [{input, box, text}].
_READ = script("read_content.js").replace("FIELD_KIND", FIELD_KIND.strip())
_READ = _READ.replace("SIGHT", SIGHT.strip()).replace("BOXES", CODE_BOXES)
_READ = _READ.replace("SAFE_DOM", SAFE_DOM.strip())
# The editors handed in: their texts, and where each one's input and box are
# (``editor_text.paths``), found in this world; one the page has moved meanwhile is left out.
_EDITORS = (
    f"(texts, placed) => ({EDITORS_AT.strip()})(placed)"
    ".flatMap((e, i) => (e ? [{...e, text: texts[i]}] : []))"
)
_READ_THIS = (
    "function (mode, texts, placed) {\n"
    f"  return ({_READ.strip()})(this, mode, ({_EDITORS})(texts, placed));\n"
    "}"
)
# The part to read (the selector's element, found as ``page_scripts.QUERY`` finds it, or the body),
# read. An invalid selector is said as such, not thrown: a DOMException's text is the page's.
_INVALID = "invalid_selector"
_READ_PART = (
    "function (selector, mode, texts, placed) {\n"
    "  let part = document.body;\n"
    "  if (selector) {\n"
    f"    try {{ part = ({QUERY.strip()})(selector); }} catch (error) {{\n"
    "      if (error instanceof DOMException && error.name === 'SyntaxError')\n"
    f"        return {{{_INVALID}: true}};\n"
    "      throw error;\n"
    "    }\n"
    "  }\n"
    f"  return ({_READ.strip()})(part, mode, ({_EDITORS})(texts, placed));\n"
    "}"
)
_BLOCKS = (
    "p", "div", "section", "article", "main", "header", "footer", "li", "ul", "ol", "table",
    "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "figure", "figcaption",
    "dl", "dt", "dd", "form", "fieldset", "legend", "details", "summary", "iframe",
)  # fmt: skip


class ContentParams(TabParams):
    format: Literal["text", "markdown", "html"] = Field(
        default="markdown", description="text, markdown (default), or the raw html."
    )
    selector: str | None = Field(
        default=None, description="CSS selector of the part to read; default: the whole page."
    )
    ref: str | None = Field(
        default=None,
        description="Ref from browser_snapshot of the part to read, e.g. a line it shortened.",
    )
    offset: int = Field(default=0, ge=0, description="Skip this many bytes (to continue).")
    download_id: str | None = Field(default=None, description="Or a file this session downloaded.")

    @model_validator(mode="after")
    def _one_part(self) -> ContentParams:
        if self.ref is not None and self.selector is not None:
            raise ValueError("give 'ref' or 'selector' (or neither, for the whole page), not both")
        if self.download_id is not None and (self.ref or self.selector or self.format == "html"):
            raise ValueError("a download is read whole as text: no ref, selector or html")
        return self


async def get_content(ctx: ToolContext, params: ContentParams) -> ToolResult:
    if params.download_id is not None:
        kept, text = await download.read_text(ctx, params.download_id)
        read = _from_offset(ctx, params, text, head=f"# {kept.describe()}\n", narrower="")
        assert read.data is not None
        return replace(read, data={**read.data, "url": kept.url, "title": kept.name})
    tree = await ctx.cdp("Page.getFrameTree")
    frame = pdf.shown(tree)
    if frame is not None:
        return await _pdf_content(ctx, params, frame)
    value = await _read(ctx, params, tree)
    what = params.ref or repr(params.selector)
    if value.get("missing"):
        raise ToolError(
            f"nothing matches the selector {params.selector!r}"
            if params.selector
            else "the page has no body yet; wait for it to load"
        )
    if value.get("secret"):
        raise ToolError(
            f"{what} is a {value['secret']} field; Tabrelay does not read what it holds"
        )
    if "value" in value:
        body = str(value["value"])
        if value.get("code") and params.format == "markdown":
            fence = "```" + "`" * max((len(m) - 2 for m in re.findall(r"`{3,}", body)), default=0)
            body = f"{fence}\n{body}\n{fence}"
        body += "\n"
    else:
        html = str(value.get("html", ""))
        body = (
            html
            if params.format == "html"
            else to_markdown(html)
            if params.format == "markdown"
            else to_text(html)
        )
    narrower = "" if params.ref else ", or pass a selector or a ref to read one part"
    withheld = value.get("withheld") if params.format != "html" else None
    notes = "\n" + withheld_note(withheld) if isinstance(withheld, dict) and withheld else ""
    return _from_offset(ctx, params, body, notes=notes, narrower=narrower)


async def _pdf_content(
    ctx: ToolContext, params: ContentParams, frame: dict[str, Any]
) -> ToolResult:
    tab = ctx.need_tab()
    if params.ref is not None or params.selector is not None or params.format == "html":
        raise ToolError(
            f"tab {tab.id} shows a PDF: it has no parts or HTML to read; read its text whole "
            "(format text or markdown), with offset to continue"
        )
    read = await pdf.read(ctx, frame)
    kind = f"(a PDF of {read.total} page{'s' if read.total != 1 else ''})"
    return _from_offset(ctx, params, pdf.text_of(read), head=_title(ctx) + f"{kind}\n", narrower="")


def _title(ctx: ToolContext) -> str:
    """The tab's title and address, the page's words, as a result's first lines."""
    tab = ctx.need_tab()
    return page_text(f"# {tab.title or '(no title)'}\n{tab.url}\n")


def _from_offset(
    ctx: ToolContext,
    params: ContentParams,
    body: str,
    *,
    head: str | None = None,
    notes: str = "",
    narrower: str,
) -> ToolResult:
    """``body`` (the page's words) from ``params.offset`` under ``head`` (by default the tab's
    title and address; the page's words in it marked), which the response fits to the budget
    with the offset to continue from."""
    tab = ctx.need_tab()
    head = _title(ctx) if head is None else head
    rest = body.encode("utf-8")[params.offset :].decode("utf-8", errors="ignore")
    return ToolResult(
        f"{head}\n",
        data={"url": tab.url, "title": tab.title, "bytes": len(body.encode("utf-8"))},
        page_fields=("url", "title"),
        reading=Reading(
            rest,
            lambda kept: f"call again with offset={params.offset + kept}{narrower}",
            after=notes,
        ),
    )


async def _read(ctx: ToolContext, params: ContentParams, tree: dict[str, Any]) -> dict[str, Any]:
    """What ``_READ`` finds for the ref, the selector or the whole page.

    Raises:
        ToolError: an unknown or stale ref, an invalid selector, or a page that cannot be read.
    """
    # Read in Tabrelay's world (what the page cannot redefine); the code editors' texts come
    # from the page's world, where their APIs are.
    editors = await editor_text.read(ctx)
    context = await page_outline.world(ctx, tree["frameTree"]["frame"]["id"])
    await open_closed_roots(ctx, context)
    handed: list[dict[str, Any]] = [
        {"value": [e.text for e in editors]},
        {"value": editor_text.paths(editors)},
    ]
    call: dict[str, Any]
    if params.ref is not None:
        held_id = held_of(ctx, params.ref)
        found = await page_outline.adopt(
            ctx, await object_for(ctx, ref=params.ref, selector=None), held=held_id
        )
        if found is None:
            raise ToolError(STALE.format(ref=params.ref))
        call = {"objectId": found, "functionDeclaration": _READ_THIS}
        # The code editors' texts are the top frame's world's: not handed to another world.
        elsewhere = child_sessions.holder_frame(ctx, held_id) is not None
        nothing: list[dict[str, Any]] = [{"value": []}, {"value": []}]
        arguments = [{"value": params.format}, *(nothing if elsewhere else handed)]
    else:
        call = {"executionContextId": context, "functionDeclaration": _READ_PART}
        arguments = [{"value": params.selector}, {"value": params.format}, *handed]
    result = await ctx.cdp(
        "Runtime.callFunctionOn", {**call, "arguments": arguments, "returnByValue": True}
    )
    value = result.get("result", {}).get("value")
    if result.get("exceptionDetails"):
        raise ToolError("the page could not be read; wait for it to load and try again")
    if isinstance(value, dict) and value.get(_INVALID):
        raise ToolError(f"{params.selector!r} is not a valid CSS selector")
    if not isinstance(value, dict):
        raise ToolError("the page could not be read; wait for it to load and try again")
    return value


# bs4 and markdownify are imported on first use: ≈ 0.1–0.2 s and a few MiB at every start
# otherwise (docs/benchmarks.md, "Ready").


_VERBATIM = "\ue000"  # private use: marks a line of code in to_text, never in a page's text


def to_markdown(html: str) -> str:
    from markdownify import markdownify

    # Underscores stay as they are: identifiers (copy_function) are what agents read most.
    text = markdownify(
        html,
        heading_style="ATX",
        bullets="-",
        strip=["form", "fieldset"],
        escape_underscores=False,
    )
    return _tidy(text)


def to_text(html: str) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for br in soup.find_all("br"):
        br.replace_with("\n")
    for pre in soup.find_all("pre"):  # code keeps its indentation (see _tidy)
        lines = pre.get_text().split("\n")
        pre.replace_with("\n" + "\n".join(_VERBATIM + line for line in lines) + "\n")
    for image in soup.find_all("img"):
        image.replace_with(f"[image: {image.get('alt')}]" if image.get("alt") else "")
    for block in soup.find_all(_BLOCKS):
        block.insert_before("\n")
        block.insert_after("\n")
    for cell in soup.find_all(["td", "th"]):
        cell.insert_after("\t")
    return _tidy(soup.get_text())


def _tidy(text: str) -> str:
    """Spaces collapsed and blank lines squeezed, except in code: fenced (markdown) or marked
    line by line (text), where indentation is meaning."""
    lines: list[str] = []
    fenced = False
    for raw in text.splitlines():
        if raw.startswith(_VERBATIM):
            lines.append(raw[len(_VERBATIM) :].rstrip())
        elif raw.strip().startswith("```"):
            fenced = not fenced
            lines.append(raw.strip())
        elif fenced:
            lines.append(raw.rstrip())
        else:
            line = re.sub(r"[ \t\u00a0]+", " ", raw).strip()
            if line or (lines and lines[-1]):
                lines.append(line)
    return "\n".join(lines).strip() + "\n"
