"""Page scripts, checked by node: each must parse, and type-check, as the page will get it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

TESTS = Path(__file__).parents[1]
TSC = TESTS / "typescript_check" / "node_modules" / "typescript" / "bin" / "tsc"
DECLARED = TESTS / "page_scripts" / "page.d.ts"

# Compiles each script without running it: as an expression (a function, an arrow, a call) or,
# failing that, as statements (a script that defines names for another); says which, or why not.
_FORMS = r"""
const vm = require('node:vm');
const scripts = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const forms = {};
for (const [name, source] of Object.entries(scripts)) {
  try { new vm.Script(`(${source}\n)`); forms[name] = 'expression'; continue; } catch (e) {}
  try { new vm.Script(`(function () {\n${source}\n})`); forms[name] = 'statements'; } catch (e) {
    forms[name] = String(e);
  }
}
process.stdout.write(JSON.stringify(forms));
"""


def _node() -> str:
    node = shutil.which("node")
    assert node, "node is not installed; make test installs it"
    return node


def forms(scripts: dict[str, str]) -> dict[str, str]:
    """How node compiles each script (by name): "expression", "statements", or its error; one
    node process for all."""
    done = subprocess.run(
        [_node(), "-e", _FORMS], input=json.dumps(scripts), capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    compiled: dict[str, str] = json.loads(done.stdout)
    return compiled


def unparsable(scripts: dict[str, str]) -> dict[str, str]:
    """The scripts node cannot compile, with its error."""
    return {
        name: form
        for name, form in forms(scripts).items()
        if form not in ("expression", "statements")
    }


def type_errors(scripts: dict[str, str], folder: Path) -> str:
    """What tsc finds in the scripts (checkJs with the DOM's types, not strict; ``page.d.ts``
    names what the page and Tabrelay's worlds give them), each checked as the module it would
    be; "" when nothing. ``folder`` gets the files."""
    assert TSC.exists(), "the type checker is missing; make test installs it (typescript-check)"
    for name, form in forms(scripts).items():
        source = scripts[name]
        module = (
            f"export const script = (\n{source}\n);\n"
            if form == "expression"
            else f"export function script() {{\n{source}\n}}\n"
        )
        (folder / f"{name}.js").write_text(module)
    shutil.copy(DECLARED, folder / "page.d.ts")
    options = {
        "allowJs": True, "checkJs": True, "noEmit": True, "strict": False, "target": "es2022",
        "module": "es2022", "lib": ["es2023", "dom", "dom.iterable"], "types": [],
        "skipLibCheck": True,
    }  # fmt: skip
    config = {"compilerOptions": options, "include": ["*.js", "page.d.ts"]}
    (folder / "tsconfig.json").write_text(json.dumps(config))
    done = subprocess.run(
        [_node(), str(TSC), "-p", str(folder / "tsconfig.json")],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    return done.stdout + done.stderr


def extension_type_errors(extension: Path) -> str:
    """What tsc finds in the extension at ``extension`` (its own ``jsconfig.json``: checkJs,
    strict, Chrome's and Node's types from the versions ``typescript_check``'s lock pins), as
    its ``npm run typecheck`` does; "" when nothing."""
    assert TSC.exists(), "the type checker is missing; make test installs it (typescript-check)"
    types = TSC.parents[2] / "@types"
    assert (types / "chrome").is_dir(), "Chrome's types are missing; make test installs them"
    done = subprocess.run(
        [_node(), str(TSC), "-p", str(extension / "jsconfig.json"), "--typeRoots", str(types)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    return done.stdout.strip()
