"""The reference: one page per layer door, written from each door's ``__all__`` and docstring catalogue.

A door (``escalation.estimators.stats``, ...) lists its public names in ``__all__`` and groups them by topic
in its docstring: a section title above a row of ``=``, then lines that begin with names (the catalogue that
``tests/test_doors.py`` checks). When Sphinx has read ``conf.py``, before autosummary looks for its tables,
this writes under ``reference/api/`` (build output, git-ignored, never edited by hand):

- ``<door>.rst`` for each door: the docstring's introduction, then one autosummary table per section of the
  catalogue, each name with the first line of its docstring (names of ``__all__`` that no section lists go
  under "Other names"; a door whose docstring has no sections, a ``Public API::`` block, keeps it whole and
  gets one table);
- ``names.rst``: every public name, door by door, in tables with ``:toctree:``, from which autosummary writes
  one page per name (``generated/<door>.<name>.rst``, from ``docs/_templates/autosummary/``). That page is an
  orphan, outside the site's table of contents, so the sidebar of every page lists the doors rather than
  hundreds of names: writing that sidebar into each of the 370 pages took three quarters of the build.

Pages of names that a door no longer exports are removed. A door's constants have no docstring of their own
(an ``int`` would show ``int``'s): their page shows the ``#:`` comment of the module that defines them, and
their value when it is short (:func:`constant_comment`).
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache
from pathlib import Path

#: The doors, bottom layer first, with the subpackages whose docstrings the door's page shows.
DOORS = {
    "escalation.estimators.stats": (),
    "escalation.estimators.records": (),
    "escalation.estimators.metric": (),
    "escalation.estimators.judges": (),
    "escalation.simulate": (),
    "escalation.figures": (),
    "escalation.studies": ("coverage", "sample_size", "judges", "differences", "capacity", "reproduction"),
    "escalation.suite": (),
    "escalation.integrations.inspect_ai": (),
    "escalation.integrations.traces": (),
    "escalation.integrations.phoenix": (),
}
#: The folder of the pages, under the manual's source folder.
OUT = "reference/api"
#: The page of every public name, under ``OUT``.
NAMES = "names"
#: The longest value of a constant that its page shows.
SHORT_VALUE = 120
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _title(text: str, mark: str) -> str:
    return f"{text}\n{mark * len(text)}\n"


def _autosummary(names: list[str], toctree: str = "") -> str:
    rows = "".join(f"   {name}\n" for name in names)
    option = f"   :toctree: {toctree}\n" if toctree else ""
    return f".. autosummary::\n{option}   :nosignatures:\n\n{rows}\n"


def catalogue(doc: str) -> tuple[str, list[tuple[str, list[str]]]]:
    """The introduction of a door's docstring and its sections ``(title, names)``, in order.

    A section title is a line above a row of ``=``; a name line starts at the margin, and its names are the
    identifiers before its first two blanks (the rule of ``tests/test_doors.py``). Without a section title
    the whole docstring is the introduction.
    """
    lines = doc.expandtabs().splitlines()
    titles = [i for i in range(len(lines) - 1) if lines[i].strip() and lines[i + 1] and set(lines[i + 1]) == {"="}]
    if not titles:
        return doc, []
    sections: list[tuple[str, list[str]]] = []
    for start, end in zip(titles, titles[1:] + [len(lines)]):
        names: list[str] = []
        for line in lines[start + 2:end]:
            if line and not line[0].isspace():
                names += _NAME.findall(line.split("  ", 1)[0])
        sections.append((lines[start].strip(), names))
    return "\n".join(lines[:titles[0]]).strip() + "\n", sections


def door_page(door: str, subpackages: tuple[str, ...] = ()) -> str:
    """The reST of one door's page."""
    module = importlib.import_module(door)
    public = list(module.__all__)
    intro, sections = catalogue(module.__doc__ or "")
    parts = [_title(door, "="), f".. module:: {door}\n", intro]  # the tables' names are relative to the door
    listed: set[str] = set()
    for title, names in sections:
        names = [n for n in dict.fromkeys(names) if n in public and n not in listed]
        if names:
            listed.update(names)
            parts += [_title(title, "-"), _autosummary(names)]
    rest = [n for n in public if n not in listed]
    if rest:
        parts += [_title("Other names" if sections else "Names", "-"), _autosummary(rest)]
    if subpackages:
        parts.append(_title("Subpackages", "-"))
    for sub in subpackages:
        package = importlib.import_module(f"{door}.{sub}")
        parts += [_title(package.__name__, "~"), f".. automodule:: {package.__name__}\n   :no-index:\n"]
        shared = [n for n in getattr(package, "__all__", []) if getattr(module, n, None) is getattr(package, n)]
        if shared:
            parts.append("Its public names, also in the door: "
                         + ", ".join(f":py:obj:`~{door}.{n}`" for n in shared) + ".\n")
    return "\n".join(parts)


def names_page() -> str:
    """The reST of the page of every public name, whose tables make autosummary write a page per name."""
    parts = [":orphan:\n", _title("Every public name", "="),
             "Each door's names in the order of its ``__all__``; the door's own page groups them by topic.\n"]
    for door in DOORS:
        names = [f"{door}.{n}" for n in importlib.import_module(door).__all__]
        parts += [_title(door, "-"), _autosummary(names, toctree="generated")]
    return "\n".join(parts)


def write_pages(srcdir: Path) -> None:
    """Write the door pages and the names page under ``srcdir / OUT`` (each only when its text changed), and
    remove the pages of names that no door exports any more (``-W`` would refuse a page in no table of
    contents)."""
    folder = Path(srcdir) / OUT
    folder.mkdir(parents=True, exist_ok=True)
    pages = {f"{door}.rst": door_page(door, subpackages) for door, subpackages in DOORS.items()}
    pages[f"{NAMES}.rst"] = names_page()
    for page, text in pages.items():
        path = folder / page
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    exported = {f"{door}.{name}" for door in DOORS for name in importlib.import_module(door).__all__}
    for stub in (folder / "generated").glob("*.rst"):
        if stub.stem not in exported:
            stub.unlink()


@cache
def _comments(door: str) -> dict[str, list[str]]:
    """The ``#:`` comments of the module-level names of a door's modules, by name (the first module wins)."""
    from sphinx.pycode import ModuleAnalyzer

    found: dict[str, list[str]] = {}
    for info in pkgutil.walk_packages(importlib.import_module(door).__path__, prefix=door + "."):
        try:
            docs = ModuleAnalyzer.for_module(info.name).find_attr_docs()
        except Exception:  # a module whose source cannot be read: no comments from it
            continue
        for (namespace, name), lines in docs.items():
            if namespace == "":
                found.setdefault(name, list(lines))
    return found


def constant_comment(app, what, name, obj, options, lines) -> None:
    """``autodoc-process-docstring``: a door's constant gets the ``#:`` comment that documents it (or no
    text), and its value when that is short (the templates show no value: a table of profiles fills a page)."""
    if what != "data":
        return
    door, _, attr = name.rpartition(".")
    if door not in DOORS:
        return
    lines[:] = _comments(door).get(attr, [])
    value = repr(obj)
    if len(value) <= SHORT_VALUE and "``" not in value:
        lines += ["", f"Value: ``{value}``"]


def skip_tuple_fields(app, what, name, obj, skip, options):
    """``autodoc-skip-member``: the fields of a named tuple, whose docstring only says "Alias for field
    number N" (the class's own docstring describes them)."""
    if (getattr(obj, "__doc__", None) or "").startswith("Alias for field number"):
        return True
    return None


def setup(app):
    app.connect("config-inited", lambda app, config: write_pages(Path(app.srcdir)))
    app.connect("autodoc-process-docstring", constant_comment)
    app.connect("autodoc-skip-member", skip_tuple_fields)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
