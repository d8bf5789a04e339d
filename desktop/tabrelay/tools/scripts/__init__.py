"""In-page code: the scripts Tabrelay runs in a page, each a JavaScript file in this folder
(package data, and in the PyInstaller bundle), read once. The Python module that runs a script
puts in what it shares with it: another script where a rule has one definition (``SIGHT``,
``FIELD_KIND``), or a value (a limit, a selector list). ``tests/unit/test_page_scripts_js.py``
checks every file and every script so composed with node; the pure functions have unit tests
under ``node --test`` (``tests/page_scripts/``).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources


@cache
def script(name: str) -> str:
    """The script in the file ``name`` of this folder.

    Raises:
        FileNotFoundError: there is no such file (a packaging mistake: tests load every one).
    """
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def fill(text: str, **values: str) -> str:
    """``text`` with each placeholder (a word named as in ``values``) replaced by its value, in
    one pass: a value that holds a placeholder's name (an agent's words, a page's) stays as it
    is."""
    words = re.compile("|".join(rf"\b{re.escape(name)}\b" for name in values))
    return words.sub(lambda found: values[found.group(0)], text)
