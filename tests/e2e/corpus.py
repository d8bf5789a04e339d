"""The outline corpus: real apps from the package registries, run here as their users run them.

``make corpus`` installs them, pinned: JupyterLab, datasette and Django's admin from PyPI
(``tests/corpus/requirements.lock`` into ``.venv-corpus``), TodoMVC's examples and Swagger UI from
npm (``tests/corpus/package-lock.json``), the Python documentation from Debian (``python3-doc``).
The code editors are the real ones of ``tests/e2e/pages/editors`` (CodeMirror, Monaco, Ace,
ProseMirror from npm). ``Corpus`` starts each app on a free loopback port with its data in a
scratch folder and names the pages to read, each with what tells that it has drawn itself.

What an app needs before its page shows something (a notebook run, todos typed, a person signed
in) is done the way a person would, over the tests' own CDP connection (``Page``).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import secrets
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from e2e.harness import Page, free_port, wait_until
from support.processes import log_tail, stop_group

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "corpus"
VENV = REPO / ".venv-corpus"
NODE_MODULES = CORPUS / "node_modules"
EDITORS = REPO / "tests" / "e2e" / "pages"
PYTHON_DOCS = next(iter(sorted(Path("/usr/share/doc").glob("python3.*/html"))), None)
ADMIN_PASSWORD = "corpus-" + secrets.token_hex(8)

Prepare = Callable[[Page], Awaitable[None]]


@dataclass(frozen=True)
class CorpusPage:
    """One page of one app, to open in a tab and read."""

    app: str
    name: str
    path: str  # on the app's own server, or on the static site
    ready: str  # a JavaScript expression, true once the page has drawn what it shows
    prepare: Prepare | None = None  # what a person does first (type todos, sign in)
    fast: bool = True  # part of `make test` (all pages are part of `make bench`)

    @property
    def key(self) -> str:
        return f"{self.app}: {self.name}"


def missing() -> str | None:
    """Why the corpus cannot run here (``make corpus`` installs it), or None."""
    if not (VENV / "bin" / "jupyter-lab").exists():
        return f"{VENV} has no JupyterLab: run `make corpus`"
    if not (NODE_MODULES / "todomvc").is_dir():
        return f"{NODE_MODULES} has no TodoMVC: run `make corpus`"
    if PYTHON_DOCS is None:
        return "Debian's python3-doc is not installed: run `make corpus`"
    return None


class _Static(http.server.SimpleHTTPRequestHandler):
    """Static files under a few roots, by the first part of the path."""

    roots: ClassVar[dict[str, Path]] = {}

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def translate_path(self, path: str) -> str:
        head, _, rest = path.lstrip("/").partition("/")
        root = self.roots.get(head)
        if root is None:
            return str(CORPUS / "no such root")
        self.directory = str(root)
        return super().translate_path("/" + rest)


class StaticSite:
    """Serves the corpus's static apps from a thread: /npm/ (node_modules), /corpus/,
    /pydocs/ (Debian's Python documentation) and /pages/ (the e2e pages, with the editors)."""

    def __init__(self) -> None:
        roots = {"npm": NODE_MODULES, "corpus": CORPUS, "pages": EDITORS}
        if PYTHON_DOCS is not None:
            roots["pydocs"] = PYTHON_DOCS
        handler = type("Handler", (_Static,), {"roots": roots})
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@dataclass
class _Server:
    name: str
    process: subprocess.Popen[bytes]
    port: int
    log: Path


@dataclass
class Corpus:
    """The corpus's apps, running (``start`` them; ``close`` ends every one)."""

    data: Path
    static: StaticSite | None = None
    servers: dict[str, _Server] = field(default_factory=dict)

    @classmethod
    @contextlib.contextmanager
    def running(cls, *, apps: tuple[str, ...] | None = None) -> Iterator[Corpus]:
        corpus = cls(Path(tempfile.mkdtemp(prefix="tabrelay-corpus-")))
        try:
            corpus.start(apps)
            yield corpus
        finally:
            corpus.close()

    def start(self, apps: tuple[str, ...] | None) -> None:
        wanted = set(apps if apps is not None else SERVED)
        self.static = StaticSite()
        starters = {
            "jupyterlab": self._jupyterlab,
            "datasette": self._datasette,
            "django": self._django,
        }
        for name in sorted(wanted & starters.keys()):
            starters[name]()
        for server in self.servers.values():
            _wait_for_port(server, timeout=60)

    def close(self) -> None:
        for server in self.servers.values():
            stop_group(server.process, grace=5)
        if self.static is not None:
            self.static.close()
        shutil.rmtree(self.data, ignore_errors=True)

    def _spawn(self, name: str, argv: list[str], *, port: int, env: dict[str, str]) -> None:
        log = self.data / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, **env},
                cwd=env.get("CWD", str(self.data)),
                start_new_session=True,
            )
        self.servers[name] = _Server(name, process, port, log)

    def _jupyterlab(self) -> None:
        root = self.data / "notebooks"
        shutil.copytree(CORPUS / "notebooks", root)
        home = self.data / "jupyter"
        port = free_port()
        argv = [
            str(VENV / "bin" / "jupyter-lab"),
            "--no-browser",
            f"--port={port}",
            "--ip=127.0.0.1",
            f"--ServerApp.root_dir={root}",
            "--IdentityProvider.token=",
            "--ServerApp.password=",
            "--ServerApp.disable_check_xsrf=True",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
        if os.geteuid() == 0:
            argv.append("--allow-root")
        env = {
            "HOME": str(home),
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
            "IPYTHONDIR": str(home / "ipython"),
        }
        self._spawn("jupyterlab", argv, port=port, env=env)

    def _datasette(self) -> None:
        database = self.data / "shop.db"
        with contextlib.closing(sqlite3.connect(database)) as connection:
            connection.executescript((CORPUS / "shop.sql").read_text())
        port = free_port()
        argv = [str(VENV / "bin" / "datasette"), "serve", str(database), "-h", "127.0.0.1"]
        self._spawn("datasette", [*argv, "-p", str(port)], port=port, env={})

    def _django(self) -> None:
        site = CORPUS / "admin_site"
        data = self.data / "django"
        data.mkdir()
        (data / "secret").write_text(secrets.token_urlsafe(40))
        env = {
            "TABRELAY_CORPUS_DATA": str(data),
            "DJANGO_SETTINGS_MODULE": "settings",
            "PYTHONPATH": str(site),
            "DJANGO_SUPERUSER_PASSWORD": ADMIN_PASSWORD,
            "CWD": str(site),
        }
        python = str(VENV / "bin" / "python")
        manage = str(site / "manage.py")
        run = functools.partial(
            subprocess.run, check=True, env={**os.environ, **env}, cwd=site, capture_output=True
        )
        run([python, manage, "migrate", "--run-syncdb", "--verbosity", "0"])
        admin = ["--username", "admin", "--email", "admin@example.org"]
        run([python, manage, "createsuperuser", "--noinput", *admin])
        run([python, manage, "loaddata", "orders", "--verbosity", "0"])
        port = free_port()
        argv = [python, manage, "runserver", f"127.0.0.1:{port}", "--noreload", "--insecure"]
        self._spawn("django", argv, port=port, env=env)

    # --- pages ------------------------------------------------------------------------------

    def url(self, page: CorpusPage) -> str:
        if page.app in self.servers:
            return f"http://127.0.0.1:{self.servers[page.app].port}/{page.path}"
        assert self.static is not None
        return self.static.url(page.path)


def _wait_for_port(server: _Server, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} exited: {log_tail(server.log, 20)}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", server.port), 1):
            return
        time.sleep(0.1)
    raise TimeoutError(
        f"{server.name} did not listen within {timeout} s: {log_tail(server.log, 20)}"
    )


# --- what each app shows ----------------------------------------------------------------------


TODO_TOGGLES = "#todo-list li .toggle, .todo-list li .toggle"


async def _type_todos(page: Page) -> None:
    """Three todos typed and one ticked, as a person would."""
    await wait_until(
        lambda: page.evaluate("!!document.querySelector('#new-todo, .new-todo')"),
        timeout=10,
        message="the field for a new todo",
    )
    for text in ("Buy milk", "Write the report", "Call Ada"):
        await page.evaluate(
            "(() => { const f = document.querySelector('#new-todo, .new-todo'); f.focus(); })()"
        )
        await page.session.send("Input.insertText", {"text": text})
        for kind, extra in (("keyDown", {"text": "\r"}), ("keyUp", {})):
            await page.session.send(
                "Input.dispatchKeyEvent",
                {"type": kind, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}
                | extra,
            )
    await wait_until(
        lambda: page.evaluate(f"document.querySelectorAll({TODO_TOGGLES!r}).length >= 3"),
        timeout=10,
        message="the todos are listed",
    )
    await page.click(TODO_TOGGLES)


async def _sign_in(page: Page) -> None:
    """The admin's sign-in form filled and sent, once (the session cookie stays)."""
    if not await page.evaluate("!!document.querySelector('#id_username')"):
        return
    await page.type_into("#id_username", "admin")
    await page.type_into("#id_password", ADMIN_PASSWORD)
    await page.click("input[type=submit]")
    await wait_until(
        lambda: page.evaluate(
            "!location.pathname.includes('/login/') && document.readyState === 'complete'"
        ),
        timeout=10,
        message="the admin signs in",
    )


_OUTPUTS = "document.querySelectorAll('.jp-OutputArea-output').length >= 4"
_TABLE = "!!document.querySelector('table.rows-and-columns tbody tr')"
_TODOS = "document.querySelectorAll('#todo-list li, .todo-list li').length >= 3"
_LOADED = "document.readyState === 'complete'"
_EDITOR = "window.editorReady === true"

PAGES: tuple[CorpusPage, ...] = (
    CorpusPage("jupyterlab", "notebook with run cells", "lab/tree/report.ipynb", _OUTPUTS),
    CorpusPage(
        "jupyterlab",
        "launcher",
        "lab?reset",
        "!!document.querySelector('.jp-Launcher-body .jp-LauncherCard')",
        fast=False,
    ),
    CorpusPage("datasette", "table", "shop/orders", _TABLE),
    CorpusPage("datasette", "databases", "", "!!document.querySelector('h2')", fast=False),
    CorpusPage("datasette", "row", "shop/orders/3", _TABLE, fast=False),
    CorpusPage(
        "datasette",
        "query",
        "shop?sql=select+status,+count(*)+from+orders+group+by+status",
        _TABLE,
        fast=False,
    ),
    CorpusPage(
        "swagger",
        "API explorer",
        "corpus/swagger/index.html",
        "document.querySelectorAll('.opblock').length >= 5",
    ),
    *(
        CorpusPage(
            "todomvc",
            make,
            f"npm/todomvc/examples/{make}/index.html",
            _TODOS,
            prepare=_type_todos,
            fast=make in ("vanillajs", "react"),
        )
        for make in ("vanillajs", "react", "vue", "angularjs", "backbone", "mithril")
    ),
    CorpusPage("pydocs", "json module", "pydocs/library/json.html", _LOADED),
    CorpusPage("pydocs", "tutorial", "pydocs/tutorial/introduction.html", _LOADED, fast=False),
    CorpusPage(
        "pydocs", "built-in functions", "pydocs/library/functions.html", _LOADED, fast=False
    ),
    *(
        CorpusPage(
            "editors", make, f"pages/editors/{make}.html", _EDITOR, fast=make == "codemirror6"
        )
        for make in ("codemirror6", "codemirror5", "monaco", "ace", "prosemirror")
    ),
    CorpusPage(
        "django",
        "order list",
        "admin/shop/order/",
        "!!document.querySelector('#result_list tbody tr')",
        prepare=_sign_in,
    ),
    CorpusPage(
        "django",
        "site index",
        "admin/",
        "!!document.querySelector('#content-main')",
        prepare=_sign_in,
        fast=False,
    ),
    CorpusPage(
        "django",
        "order form",
        "admin/shop/order/2/change/",
        "!!document.querySelector('#order_form')",
        prepare=_sign_in,
        fast=False,
    ),
)
SERVED = ("jupyterlab", "datasette", "django")  # apps with a server of their own
