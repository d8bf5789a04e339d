"""Screenshots through CDP (``Page.captureScreenshot``): the viewport, the full page, or one
element, scaled to a maximum width and always within the response budget (a too-large image is
retaken as JPEG, at lower quality, then smaller). Very tall pages stop at ``MAX_HEIGHT`` pixels
and say so.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from tabrelay.errors import ToolError
from tabrelay.tools.context import Image, TabParams, Target, ToolContext, ToolResult
from tabrelay.tools.page import child_sessions
from tabrelay.tools.page.refs import locate

Format = Literal["jpeg", "png", "webp"]


MAX_HEIGHT = 8000  # image pixels; taller full-page shots are cut (and the result says so)


class ScreenshotParams(TabParams, Target):
    full_page: bool = Field(default=False, description="The whole page, not just the viewport.")
    format: Format = Field(default="jpeg", description="Image format.")
    quality: int = Field(default=80, ge=10, le=100, description="JPEG/WebP quality.")
    max_width: int | None = Field(
        default=None, ge=100, le=8000, description="Scale down to this width (default 1280)."
    )


async def screenshot(ctx: ToolContext, params: ScreenshotParams) -> ToolResult:
    if params.full_page and (params.ref or params.selector):
        raise ToolError("give full_page or an element (ref/selector), not both")
    metrics = await ctx.cdp("Page.getLayoutMetrics")
    css = metrics["cssVisualViewport"]
    dpr = _device_pixel_ratio(metrics)
    note, what = "", "the visible part of the page"
    if params.ref or params.selector:
        target = await locate(ctx, ref=params.ref, selector=params.selector, action="hover")
        quads = await child_sessions.quads(ctx, target.object_id)
        left, top, right, bottom = child_sessions.bounds(quads)
        css = (await ctx.cdp("Page.getLayoutMetrics"))["cssVisualViewport"]  # after scrolling
        clip = {
            "x": left + css["pageX"],
            "y": top + css["pageY"],
            "width": right - left,
            "height": bottom - top,
        }
        what, beyond = target.description, False
    elif params.full_page:
        size = metrics["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"]}
        what, beyond = "the full page", True
    else:
        clip = {
            "x": css["pageX"],
            "y": css["pageY"],
            "width": css["clientWidth"],
            "height": css["clientHeight"],
        }
        beyond = False
    max_width = params.max_width or ctx.settings.screenshot_max_width
    scale = min(1.0, max_width / (clip["width"] * dpr)) if clip["width"] > 0 else 1.0
    if clip["height"] * scale * dpr > MAX_HEIGHT:
        clip["height"] = MAX_HEIGHT / (scale * dpr)
        note = f" Cut at {round(clip['height'])} px of the page; scroll for the rest."
    image = await capture(ctx, clip, dpr=dpr, params=params, beyond_viewport=beyond)
    shown = image.mime_type.removeprefix("image/")
    if shown != params.format or image.width < round(clip["width"] * scale * dpr) - 1:
        note += " Made smaller to fit the response budget."
    return ToolResult(
        f"Screenshot of {what} in tab {ctx.need_tab().id}: {image.width}×{image.height} "
        f"{shown}.{note}",
        image=image,
        data={"width": image.width, "height": image.height, "mime_type": image.mime_type},
    )


async def capture(
    ctx: ToolContext,
    clip: dict[str, float],
    *,
    dpr: float,
    params: ScreenshotParams,
    beyond_viewport: bool = False,
) -> Image:
    """Capture ``clip`` (CSS pixels) no wider than the max width and within the budget."""
    max_width = params.max_width or ctx.settings.screenshot_max_width
    if clip["width"] <= 0 or clip["height"] <= 0:
        raise ToolError("there is nothing visible to capture (zero-sized area)")
    scale = min(1.0, max_width / (clip["width"] * dpr))
    image_format, quality = params.format, params.quality
    for _ in range(6):
        request: dict[str, Any] = {
            "format": image_format,
            "clip": {**clip, "scale": scale},
            "captureBeyondViewport": beyond_viewport,
        }
        if image_format != "png":
            request["quality"] = quality
        data = (await ctx.cdp("Page.captureScreenshot", request, timeout=60))["data"]
        if len(data) <= ctx.budget_bytes:
            return Image(
                data=data,
                mime_type=f"image/{image_format}",
                width=round(clip["width"] * scale * dpr),
                height=round(clip["height"] * scale * dpr),
            )
        # Too big for the budget: JPEG first, then lower quality, then smaller.
        if image_format == "png":
            image_format = "jpeg"
        elif quality > 50:
            quality = 50
        else:
            scale *= 0.7
    raise ToolError("the screenshot does not fit the response budget even scaled down")


def _device_pixel_ratio(metrics: dict[str, Any]) -> float:
    css, device = metrics.get("cssLayoutViewport"), metrics.get("layoutViewport")
    if css and device and css.get("clientWidth"):
        return max(0.25, float(device["clientWidth"]) / float(css["clientWidth"]))
    return 1.0
