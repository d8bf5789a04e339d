"""browser_get_content: a page (or one part of it) as text, markdown or HTML.

For text and markdown the page first serializes its visible content in the page, leaving out
boilerplate — navigation, headers and footers outside the article, asides, ads, cookie and
consent banners, scripts, styles — and including open shadow roots and same-origin frames.
Markdown comes from that HTML through ``markdownify``; HTML mode returns the markup as it is.
Long results end with a marker and the offset to continue from.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import Field

from tabrelay.errors import ToolError
from tabrelay.tools.budget import fit_text
from tabrelay.tools.context import TabParams, ToolContext, ToolResult

_EXTRACT = r"""
((selector, mode) => {
  const find = (root) => {
    const found = root.querySelector(selector);
    if (found) return found;
    for (const host of root.querySelectorAll('*'))
      if (host.shadowRoot) { const inner = find(host.shadowRoot); if (inner) return inner; }
    return null;
  };
  const root = selector ? find(document) : document.body;
  if (!root) return {missing: true};
  if (mode === 'html') return {html: root.outerHTML, title: document.title};
  const DROP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'CANVAS', 'OBJECT',
    'EMBED', 'NAV', 'ASIDE', 'DIALOG', 'BUTTON', 'SELECT', 'INPUT', 'TEXTAREA', 'HEAD',
    'LINK', 'META']);
  const DROP_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search',
    'dialog', 'alertdialog', 'menu', 'menubar', 'toolbar']);
  const BOILERPLATE = new RegExp('(^|[\\s_-])(cookies?|consent|gdpr|advert|advertisement|ads?|'
    + 'adslot|sponsor(ed)?|promo|newsletter|popup|social|share|breadcrumbs?)([\\s_-]|$)', 'i');
  const KEEP = {A: ['href', 'title'], IMG: ['src', 'alt'], TD: ['colspan', 'rowspan'],
    TH: ['colspan', 'rowspan'], OL: ['start'], CODE: ['class'], PRE: ['class']};
  const ENTITIES = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'};
  const escape = (s) => s.replace(/[&<>"]/g, (c) => ENTITIES[c]);
  const inArticle = (el) => !!el.parentElement
    && !!el.parentElement.closest('article, main, section');
  const skip = (el) => {
    if (el === root) return false;
    if (DROP.has(el.tagName)) return true;
    if ((el.tagName === 'HEADER' || el.tagName === 'FOOTER') && !inArticle(el)) return true;
    if (DROP_ROLES.has(el.getAttribute('role'))) return true;
    if (el.getAttribute('aria-hidden') === 'true' || el.hidden) return true;
    const marks = `${el.id} ${typeof el.className === 'string' ? el.className : ''}`;
    if (BOILERPLATE.test(marks)) return true;
    if (el.checkVisibility && !el.checkVisibility({checkVisibilityCSS: true})) return true;
    return false;
  };
  const out = [];
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) { out.push(escape(node.textContent)); return; }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    if (skip(node)) return;
    const tag = node.tagName.toLowerCase();
    const attrs = (KEEP[node.tagName] || []).map((name) => {
      let value = name === 'href' ? node.href : name === 'src' ? node.src : node.getAttribute(name);
      return value ? ` ${name}="${escape(String(value))}"` : '';
    }).join('');
    out.push(`<${tag}${attrs}>`);
    if (node.tagName === 'IFRAME') {
      let doc = null;
      try { doc = node.contentDocument; } catch (error) { doc = null; }
      if (doc && doc.body) walk(doc.body);
    } else {
      for (const child of (node.shadowRoot || node).childNodes) walk(child);
    }
    if (!['img', 'br', 'hr'].includes(tag)) out.push(`</${tag}>`);
  };
  walk(root);
  return {html: out.join(''), title: document.title};
})
"""
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
    offset: int = Field(default=0, ge=0, description="Skip this many bytes (to continue).")


async def get_content(ctx: ToolContext, params: ContentParams) -> ToolResult:
    result = await ctx.cdp(
        "Runtime.evaluate",
        {
            "expression": f"{_EXTRACT}({json.dumps(params.selector)}, {json.dumps(params.format)})",
            "returnByValue": True,
        },
    )
    value = result.get("result", {}).get("value")
    if result.get("exceptionDetails") or not isinstance(value, dict):
        raise ToolError("the page could not be read; wait for it to load and try again")
    if value.get("missing"):
        raise ToolError(
            f"nothing matches the selector {params.selector!r}"
            if params.selector
            else "the page has no body yet; wait for it to load"
        )
    html = str(value.get("html", ""))
    body = (
        html
        if params.format == "html"
        else to_markdown(html)
        if params.format == "markdown"
        else to_text(html)
    )
    tab = ctx.need_tab()
    header = f"# {tab.title or '(no title)'}\n{tab.url}\n\n"
    rest = body.encode("utf-8")[params.offset :].decode("utf-8", errors="ignore")
    fitted = fit_text(
        rest,
        ctx.budget_bytes - len(header.encode("utf-8")),
        continuation=lambda kept: (
            f"call again with offset={params.offset + kept}, or pass a selector to read one part"
        ),
    )
    return ToolResult(
        header + fitted.text,
        data={
            "url": tab.url,
            "title": tab.title,
            "bytes": len(body.encode("utf-8")),
            "truncated": fitted.truncated,
        },
    )


# bs4 and markdownify are imported on first use: ≈ 0.1–0.2 s and a few MiB at every start
# otherwise (docs/benchmarks.md, "Ready").


def to_markdown(html: str) -> str:
    from markdownify import markdownify

    text = markdownify(html, heading_style="ATX", bullets="-", strip=["form", "fieldset"])
    return _tidy(text)


def to_text(html: str) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for br in soup.find_all("br"):
        br.replace_with("\n")
    for image in soup.find_all("img"):
        image.replace_with(f"[image: {image.get('alt')}]" if image.get("alt") else "")
    for block in soup.find_all(_BLOCKS):
        block.insert_before("\n")
        block.insert_after("\n")
    for cell in soup.find_all(["td", "th"]):
        cell.insert_after("\t")
    return _tidy(soup.get_text())


def _tidy(text: str) -> str:
    lines = [re.sub(r"[ \t\u00a0]+", " ", line).strip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"
