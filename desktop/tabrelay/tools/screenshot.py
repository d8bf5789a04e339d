"""Screenshots through CDP (``Page.captureScreenshot``), scaled to a maximum width and always
within the response budget: when an image is too large it is retaken smaller or as JPEG.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from tabrelay.errors import ToolError
from tabrelay.tools.context import Image, TabParams, ToolContext, ToolResult

Format = Literal["jpeg", "png", "webp"]


class ScreenshotParams(TabParams):
    format: Format = Field(default="jpeg", description="Image format.")
    quality: int = Field(default=80, ge=10, le=100, description="JPEG/WebP quality.")
    max_width: int | None = Field(
        default=None, ge=100, le=8000, description="Scale down to this width (default 1280)."
    )


async def screenshot(ctx: ToolContext, params: ScreenshotParams) -> ToolResult:
    metrics = await ctx.cdp("Page.getLayoutMetrics")
    css = metrics["cssVisualViewport"]
    dpr = _device_pixel_ratio(metrics)
    clip = {
        "x": css["pageX"],
        "y": css["pageY"],
        "width": css["clientWidth"],
        "height": css["clientHeight"],
    }
    image = await capture(ctx, clip, dpr=dpr, params=params)
    return ToolResult(
        f"Screenshot of tab {ctx.need_tab().id}: {image.width}×{image.height} {params.format}",
        image=image,
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
