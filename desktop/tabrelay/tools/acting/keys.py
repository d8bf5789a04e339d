"""Key names (``Enter``, ``Control+a``, ``Shift+Tab``…) as CDP ``Input.dispatchKeyEvent`` fields.

Follows the DOM ``KeyboardEvent.key``/``code`` values and Windows virtual key codes Chrome
expects, for the keys agents press: navigation, editing, function keys, and printable ASCII.
"""

from __future__ import annotations

from dataclasses import dataclass

from tabrelay.errors import ToolError

MODIFIERS = {"Alt": 1, "Control": 2, "Meta": 4, "Shift": 8}
_ALIASES = {
    "ctrl": "Control", "control": "Control", "cmd": "Meta", "command": "Meta", "meta": "Meta",
    "win": "Meta", "alt": "Alt", "option": "Alt", "shift": "Shift", "esc": "Escape",
    "return": "Enter", "del": "Delete", "space": " ", "spacebar": " ", "up": "ArrowUp",
    "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight", "pgup": "PageUp",
    "pgdn": "PageDown",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Key:
    key: str
    code: str
    key_code: int
    text: str = ""


_SPECIAL = {
    "Enter": Key("Enter", "Enter", 13, "\r"),
    "Tab": Key("Tab", "Tab", 9),
    "Escape": Key("Escape", "Escape", 27),
    "Backspace": Key("Backspace", "Backspace", 8),
    "Delete": Key("Delete", "Delete", 46),
    "Insert": Key("Insert", "Insert", 45),
    "Home": Key("Home", "Home", 36),
    "End": Key("End", "End", 35),
    "PageUp": Key("PageUp", "PageUp", 33),
    "PageDown": Key("PageDown", "PageDown", 34),
    "ArrowUp": Key("ArrowUp", "ArrowUp", 38),
    "ArrowDown": Key("ArrowDown", "ArrowDown", 40),
    "ArrowLeft": Key("ArrowLeft", "ArrowLeft", 37),
    "ArrowRight": Key("ArrowRight", "ArrowRight", 39),
    " ": Key(" ", "Space", 32, " "),
    "Alt": Key("Alt", "AltLeft", 18),
    "Control": Key("Control", "ControlLeft", 17),
    "Meta": Key("Meta", "MetaLeft", 91),
    "Shift": Key("Shift", "ShiftLeft", 16),
    **{f"F{n}": Key(f"F{n}", f"F{n}", 111 + n) for n in range(1, 13)},
}
_PUNCTUATION = {
    "-": ("Minus", 189), "=": ("Equal", 187), "[": ("BracketLeft", 219),
    "]": ("BracketRight", 221), "\\": ("Backslash", 220), ";": ("Semicolon", 186),
    "'": ("Quote", 222), ",": ("Comma", 188), ".": ("Period", 190), "/": ("Slash", 191),
    "`": ("Backquote", 192),
}  # fmt: skip


def key_for(name: str) -> Key:
    """The key called ``name`` (a key name, an alias, or one printable character)."""
    name = _ALIASES.get(name.lower(), name) if len(name) > 1 else name
    if name in _SPECIAL:
        return _SPECIAL[name]
    for special in _SPECIAL:
        if special.lower() == name.lower():
            return _SPECIAL[special]
    if len(name) == 1 and name.isprintable():
        if name.isalpha():
            return Key(name, f"Key{name.upper()}", ord(name.upper()), name)
        if name.isdigit():
            return Key(name, f"Digit{name}", ord(name), name)
        code, key_code = _PUNCTUATION.get(name, ("", 0))
        return Key(name, code, key_code, name)
    raise ToolError(
        f"unknown key {name!r}: use a key name (Enter, Tab, Escape, ArrowDown, Backspace, F5…), "
        "one character, or a combination such as Control+a or Shift+Tab"
    )


def parse_combo(combo: str) -> tuple[int, Key]:
    """``Control+Shift+k`` → (modifier bitmask, the k key)."""
    parts = [p for p in combo.replace(" ", "").split("+") if p] if combo.strip() != "+" else ["+"]
    if combo.endswith("++"):
        parts.append("+")
    if not parts:
        raise ToolError("say which key to press, e.g. Enter or Control+a")
    modifiers = 0
    for part in parts[:-1]:
        modifier = _ALIASES.get(part.lower(), part)
        if modifier not in MODIFIERS:
            raise ToolError(f"{part!r} is not a modifier (use Control, Shift, Alt or Meta)")
        modifiers |= MODIFIERS[modifier]
    return modifiers, key_for(parts[-1])
