"""Form tools: type into fields, fill a form at once, choose options, attach files.

Typing goes through ``text_entry``: into plain fields and every common editor, replacing what
was there (unless told to append), as input events (``Input.insertText``) or key by key with
human-like pauses, and read back to be exactly what was asked. Text for a password,
one-time-code or card field, or marked secret by the caller, is never stored or shown
(``redaction.py``; the clearances below prove the other fields plain). Files come only from
folders the person allowed in the settings.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, model_validator

from tabrelay.errors import ToolError
from tabrelay.tools.acting.aftermath import after_action, following
from tabrelay.tools.acting.input_events import click_at, press
from tabrelay.tools.acting.keys import key_for
from tabrelay.tools.acting.text_entry import call_on_element, enter_text
from tabrelay.tools.context import TabParams, Target, TargetParams, ToolContext, ToolResult
from tabrelay.tools.page.refs import Located, locate, node_id_of, secret_kind, went_away
from tabrelay.tools.results import page_text
from tabrelay.tools.scripts import script

HIDDEN_TEXT_HINT = "Never store or show it (secret fields never are)."

_SELECT_OPTIONS = script("select_options.js")
_CHECKED = (
    "function () { return this.checked === true || this.getAttribute('aria-checked') === 'true'; }"
)


class TypeParams(TargetParams):
    text: str = Field(description="What to type.")
    submit: bool = Field(default=False, description="Press Enter afterwards.")
    append: bool = Field(default=False, description="Add to the field's text.")
    slowly: bool = Field(default=False, description="Key by key with pauses, for fussy pages.")
    secret: bool = Field(default=False, description=HIDDEN_TEXT_HINT)


async def clear_type(ctx: ToolContext, params: TypeParams) -> frozenset[str]:
    """``text`` is shown only when it goes into a plain field and the caller did not hide it."""
    if params.secret or await secret_kind(ctx, ref=params.ref, selector=params.selector):
        return frozenset()
    return frozenset({"text"})


async def type_text(ctx: ToolContext, params: TypeParams) -> ToolResult:
    what = params.ref or params.selector or ""
    target = await locate(ctx, ref=params.ref, selector=params.selector, action="type")
    if target.secret:
        ctx.secrets.add("text")
    if not target.editable:
        raise ToolError(
            f"{what} ({target.description}) is not a text field; "
            "use browser_click, browser_select_option or browser_fill_form"
        )
    async with following(ctx) as watch:
        note = await enter_text(
            ctx,
            target,
            params.text,
            append=params.append,
            slowly=params.slowly,
            what=what,
            secret=params.secret,
        )
        dialog = None
        if params.submit:
            dialog = await press(ctx, key_for("Enter"))
        typed = f"a {target.secret}" if target.secret else f"{len(params.text)} characters"
        added = "Added" if params.append else "Typed"
        return await after_action(
            f"{added} {typed} into {what} ({target.description})"
            + (" and pressed Enter" if params.submit else "")
            + f".{note}",
            watch,
            dialog,
        )


class SelectParams(TargetParams):
    values: list[str] = Field(min_length=1, description="By value or visible label.")


async def select_option(ctx: ToolContext, params: SelectParams) -> ToolResult:
    target = await locate(ctx, ref=params.ref, selector=params.selector, action="select")
    async with following(ctx) as watch:
        chosen = await _choose(ctx, target, params.values, params.ref or params.selector or "")
        return await after_action(
            f"Selected {page_text(', '.join(repr(c) for c in chosen))} in {target.description}.",
            watch,
            None,
        )


async def _choose(ctx: ToolContext, target: Located, values: list[str], what: str) -> list[str]:
    result = await call_on_element(ctx, target.object_id, _SELECT_OPTIONS, values)
    match result.get("error"):
        case "not_select":
            raise ToolError(
                f"{what} ({target.description}) is not a <select>; for a custom dropdown, click "
                "it and then click the option"
            )
        case "missing":
            options = page_text(", ".join(repr(o) for o in result.get("options", [])[:30]))
            if target.secret:  # a card's expiry, say: neither the value nor the choices
                raise ToolError(f"{what} ({target.secret}) has no option for the value given")
            raise ToolError(f"{what} has no option {result.get('value')!r}; its options: {options}")
        case "disabled_option":
            given = "given" if target.secret else repr(result.get("value"))
            raise ToolError(f"the option {given} is disabled")
        case "single":
            raise ToolError(f"{what} allows one choice only")
    return [str(s) for s in result.get("selected", [])]


class FormField(Target):
    value: str | bool | list[str] = Field(
        description="Text, true/false (checkbox, radio) or option(s) (select)."
    )
    secret: bool = Field(default=False, description=HIDDEN_TEXT_HINT)

    @model_validator(mode="after")
    def _one_target(self) -> FormField:
        if (self.ref is None) == (self.selector is None):
            raise ValueError("each field needs either 'ref' or 'selector'")
        return self


class FillFormParams(TabParams):
    fields: list[FormField] = Field(min_length=1, max_length=100, description="The fields to fill.")


async def clear_form(ctx: ToolContext, params: FillFormParams) -> frozenset[str]:
    """The fields whose value may be shown: choices, and text for plain fields not hidden."""
    cleared = set()
    for index, field in enumerate(params.fields):
        if field.secret:
            continue
        if isinstance(field.value, str) and await secret_kind(
            ctx, ref=field.ref, selector=field.selector
        ):
            continue
        cleared.add(f"fields.{index}.value")
    return frozenset(cleared)


async def fill_form(ctx: ToolContext, params: FillFormParams) -> ToolResult:
    done: list[str] = []
    async with following(ctx) as watch:
        for index, field in enumerate(params.fields):
            name = field.ref or field.selector or ""
            try:
                target = await locate(ctx, ref=field.ref, selector=field.selector, action="fill")
            except ToolError as error:
                if not done:
                    raise
                # Which fields were filled before it, not with what: an error goes to the
                # command log as it is (a choice in a card field is no less a secret).
                filled = ", ".join(f.ref or f.selector or "" for f in params.fields[:index])
                raise ToolError(
                    f"Filled part of the form ({filled}); then {name}: {error.message} "
                    f"({len(params.fields) - index} field(s) not filled)"
                ) from None
            if target.secret:
                ctx.secrets.add(f"fields.{index}.value")
            if isinstance(field.value, bool):
                checked = await call_on_element(ctx, target.object_id, _CHECKED)
                dialog = None
                if checked != field.value:
                    dialog = await click_at(ctx, target.x, target.y)
                done.append(f"{name} {'checked' if field.value else 'unchecked'}")
                if dialog is not None:
                    left = len(params.fields) - index - 1
                    return ToolResult(
                        f"Filled part of the form: {'; '.join(done)}; {left} field(s) not filled.",
                        dialog=dialog,
                    )
            elif isinstance(field.value, list) or target.tag == "select":
                values = field.value if isinstance(field.value, list) else [field.value]
                chosen = await _choose(ctx, target, values, name)
                done.append(f"{name} = {page_text(', '.join(chosen))}")
            elif target.editable:
                note = await enter_text(
                    ctx, target, field.value, append=False, slowly=False, what=name,
                    secret=field.secret,
                )  # fmt: skip
                secret = f" (a {target.secret})" if target.secret else ""
                done.append(f"{name} filled{secret}{note}")
            else:
                raise ToolError(
                    f"{name} ({target.description}) takes no text; give true/false or an option"
                )
        return await after_action("Filled the form: " + "; ".join(done) + ".", watch, None)


class UploadParams(TargetParams):
    paths: list[str] = Field(
        min_length=1, max_length=20, description="Absolute paths of files in an allowed folder."
    )


async def upload_file(ctx: ToolContext, params: UploadParams) -> ToolResult:
    files = [allowed_file(p, ctx.settings.upload_dirs) for p in params.paths]
    node = await node_id_of(ctx, ref=params.ref, selector=params.selector)
    # Chrome gives files to an input the page took away as well: that would say "attached".
    connected = await ctx.call_on(node.object_id, "function () { return this.isConnected; }")
    if connected.get("result", {}).get("value") is not True:
        raise ToolError(went_away(params.ref, params.selector))
    described = await ctx.cdp(
        "DOM.describeNode", {"backendNodeId": node.backend}, session=node.session
    )
    attributes = described["node"].get("attributes", [])
    kind = dict(zip(attributes[0::2], attributes[1::2], strict=False)).get("type", "")
    if described["node"].get("nodeName") != "INPUT" or kind.lower() != "file":
        raise ToolError(f"{params.ref or params.selector} is not a file input")
    await ctx.cdp(
        "DOM.setFileInputFiles",
        {"files": [str(f) for f in files], "backendNodeId": node.backend},
        session=node.session,
    )
    return ToolResult(f"Attached {', '.join(f.name for f in files)}.")


def allowed_file(raw: str, folders: list[str]) -> Path:
    """``raw`` as a file inside one of ``folders`` (resolved: no ``..`` or symlink escapes).

    Raises:
        ToolError: relative, outside every allowed folder, missing, or not a file.
    """
    if not folders:
        raise ToolError(
            "no folder is allowed for uploads; the person can add one in Tabrelay's settings"
        )
    path = Path(raw)
    if not path.is_absolute():
        raise ToolError(f"{raw!r} is not an absolute path")
    resolved = path.resolve()
    roots = [Path(f).expanduser().resolve() for f in folders]
    if not any(os.path.commonpath([resolved, root]) == str(root) for root in roots):
        raise ToolError(f"{raw!r} is outside the folders allowed for uploads")
    if not resolved.is_file():
        raise ToolError(f"{raw!r} is not a file")
    return resolved
