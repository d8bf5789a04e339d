"""The saved recipes: one readable JSON file per recipe, ``<folder>/<name>.json``, private to
its owner, replaced atomically, earlier revisions kept in ``<folder>/history/``.

A bad file (garbage, half-written by another program, a newer format, a wrong shape) never
stops the others from being listed: ``problems()`` names it and why. Nothing here knows about
the relay, pages or sessions; the recorder and the front ends decide what to save.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

from tabrelay.config.files import (
    atomic_write,
    file_lock,
    make_private_dir,
    read_regular,
    tighten_dir,
)
from tabrelay.errors import ConfigError
from tabrelay.recipes.model import RECIPE_NAME, Recipe, RecipeError, check_name, parse_recipe
from tabrelay.recipes.model import recipe_text as _recipe_text

SUFFIX = ".json"
HISTORY = "history"
LOCK = ".lock"  # saves and deletes from the app and a CLI process take turns on it
MAX_FILE = 32 * 1024 * 1024  # bytes; a recipe at its limits is about 11 MB of JSON
_REVISION = re.compile(r"\.r([0-9]{1,9})(?:\.[0-9]{1,4})?\.json")


class RecipeStore:
    """The recipe files under one folder (the app's ``data_dir / "recipes"``).

    The folder is created 0700 on the first save, each file 0600. Saving over a name keeps the
    file it replaces as ``history/<name>.r<revision>.json`` and writes the new one with the next
    revision; deleting keeps the last one there too, so no save or delete loses a recipe.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.history = folder / HISTORY

    # --- reading ----------------------------------------------------------------------------

    def names(self) -> builtins.list[str]:
        """The names of the saved recipes, sorted (unreadable ones included: ``load`` says
        why they cannot be read)."""
        return sorted(name for name, _ in self._files())

    def list(self) -> builtins.list[Recipe]:
        """Every saved recipe that can be read, sorted by name; the rest are in
        ``problems()``."""
        recipes, _ = self.scan()
        return recipes

    def problems(self) -> builtins.list[str]:
        """One sentence per file in the folder that is not a readable recipe: its name and
        why."""
        _, problems = self.scan()
        return problems

    def load(self, name: str) -> Recipe:
        """The recipe saved as ``name``.

        Raises:
            RecipeError: the name cannot name a recipe, no recipe has it (the saved ones are
                named), or its file cannot be read as a recipe (why).
        """
        path = self.path_of(name)
        try:
            return self._read(path, name)
        except FileNotFoundError:
            saved = self.names()
            raise RecipeError(
                f"there is no recipe named {name!r}; "
                + (f"saved recipes: {', '.join(saved)}" if saved else "no recipe is saved yet")
            ) from None

    def path_of(self, name: str) -> Path:
        """The file that holds (or would hold) the recipe ``name``.

        Raises:
            RecipeError: ``name`` cannot name a recipe (a path, "..", a NUL, too long…).
        """
        if not isinstance(name, str):
            raise RecipeError(f"a recipe name is text, not {type(name).__name__}")
        check_name(name)
        path = self.folder / f"{name}{SUFFIX}"
        # check_name allows no separator, but say so here too: this is the one gate to the disk.
        if path.parent != self.folder or os.sep in name or (os.altsep and os.altsep in name):
            raise RecipeError(f"{name[:100]!r} cannot name a recipe: it is a path")
        return path

    # --- writing ----------------------------------------------------------------------------

    def save(self, recipe: Recipe) -> Recipe:
        """Write ``recipe`` under its name and return what was written.

        A recipe already saved under the name is kept in ``history/`` first, and the new one
        gets the next revision (also after a delete, so history is never overwritten).

        Raises:
            RecipeError: the name cannot name a recipe, the recipe does not read back as one,
                or the folder cannot be written (why).
        """
        path = self.path_of(recipe.name)
        with self._locked():
            old: bytes | None = None
            old_revision: int | None = None
            with contextlib.suppress(FileNotFoundError):
                old = self._read_bytes(path)
                with contextlib.suppress(RecipeError):
                    old_revision = parse_recipe(old, source=str(path)).revision
            known = self._history_revisions(recipe.name)
            if old_revision is not None:
                known.append(old_revision)
            revision = max(known) + 1 if known else recipe.revision
            if old is not None:
                kept = old_revision if old_revision is not None else revision
                self._keep(recipe.name, kept, old)
                revision = max(revision, kept + 1)
            saved = recipe.model_copy(update={"revision": revision})
            text = _recipe_text(saved)
            # What is written must read back: a recipe built with model_copy skips validation.
            parse_recipe(text, source=f"recipe {recipe.name!r}")
            self._write(path, text.encode())
            return saved

    def delete(self, name: str) -> None:
        """Remove the recipe ``name``; its last file is kept in ``history/``.

        Raises:
            RecipeError: no recipe has that name, or the folder cannot be written.
        """
        path = self.path_of(name)
        with self._locked():
            try:
                data = self._read_bytes(path)
            except FileNotFoundError:
                saved = self.names()
                raise RecipeError(
                    f"there is no recipe named {name!r} to delete; "
                    + (f"saved recipes: {', '.join(saved)}" if saved else "none is saved")
                ) from None
            try:
                revision = parse_recipe(data, source=str(path)).revision
            except RecipeError:
                known = self._history_revisions(name)
                revision = max(known) + 1 if known else 1
            self._keep(name, revision, data)
            try:
                path.unlink()
            except FileNotFoundError:
                pass  # another process deleted it meanwhile: gone either way
            except OSError as exc:
                raise RecipeError(f"could not delete {path}: {exc.strerror or exc}") from None

    # --- inside -----------------------------------------------------------------------------

    def _files(self) -> Iterator[tuple[str, Path]]:
        """(name, path) of each file that could be a recipe by its name."""
        for name, path, ok in self._entries():
            if ok:
                yield name, path

    def _entries(self) -> Iterator[tuple[str, Path, bool]]:
        try:
            entries = builtins.list(os.scandir(self.folder))
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise RecipeError(
                f"could not read the recipes folder {self.folder}: {exc.strerror}"
            ) from None
        for entry in entries:
            if entry.name.startswith(".") or not entry.name.endswith(SUFFIX):
                continue  # the lock, temporary files of a save in progress, other files
            with contextlib.suppress(OSError):
                if entry.is_dir():
                    continue
            name = entry.name[: -len(SUFFIX)]
            yield name, Path(entry.path), bool(RECIPE_NAME.fullmatch(name))

    def scan(self) -> tuple[builtins.list[Recipe], builtins.list[str]]:
        """``list()`` and ``problems()`` from one read of the folder."""
        recipes: builtins.list[Recipe] = []
        problems: builtins.list[str] = []
        for name, path, ok in sorted(self._entries()):
            if not ok:
                problems.append(
                    f"{path.name}: not a recipe name (1 to 80 letters, digits, spaces, '_', "
                    "'.' or '-', starting with a letter or digit); rename the file to load it"
                )
                continue
            try:
                recipes.append(self._read(path, name))
            except FileNotFoundError:
                continue  # deleted while listing
            except RecipeError as exc:
                problems.append(str(exc))
        return recipes, problems

    def _read(self, path: Path, name: str) -> Recipe:
        """Raises FileNotFoundError, or RecipeError for anything else."""
        recipe = parse_recipe(self._read_bytes(path), source=f"recipe file {path}")
        # A file renamed by hand renames its recipe: the file name is what the person sees.
        return recipe if recipe.name == name else recipe.model_copy(update={"name": name})

    @staticmethod
    def _read_bytes(path: Path) -> bytes:
        """Raises FileNotFoundError, or RecipeError for anything else."""
        try:
            return read_regular(path, limit=MAX_FILE)
        except ConfigError as error:
            raise RecipeError(f"recipe file {error.message}") from None

    def _history_revisions(self, name: str) -> builtins.list[int]:
        revisions = []
        prefix = name
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            for entry in os.scandir(self.history):
                if entry.name.startswith(prefix) and (
                    m := _REVISION.fullmatch(entry.name[len(prefix) :])
                ):
                    revisions.append(int(m.group(1)))
        return revisions

    def _keep(self, name: str, revision: int, data: bytes) -> None:
        """Put ``data`` (a file about to be replaced or deleted) in history, never over another
        kept file with different contents."""
        path = self.history / f"{name}.r{revision}{SUFFIX}"
        for extra in range(1, 10_000):
            try:
                if self._read_bytes(path) == data:
                    return  # kept already
            except FileNotFoundError:
                break
            except RecipeError:
                pass  # something unreadable there: keep this one beside it
            path = self.history / f"{name}.r{revision}.{extra}{SUFFIX}"
        self._write(path, data)

    def _write(self, path: Path, data: bytes) -> None:
        try:
            atomic_write(path, data)
        except ConfigError as exc:
            raise RecipeError(f"could not save the recipe: {exc.message}") from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            try:
                for folder in (self.folder, self.history):
                    make_private_dir(folder)
                    tighten_dir(folder)
                stack.enter_context(file_lock(self.folder / LOCK))
            except OSError as exc:
                raise RecipeError(
                    f"could not use the recipes folder {self.folder}: {exc.strerror or exc}"
                ) from None
            yield
