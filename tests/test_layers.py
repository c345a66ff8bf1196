"""The architecture, read from the code: one door per layer, and imports that only go down.

From the bottom, the four rooms of ``estimators`` (``stats`` <- ``records`` <- ``metric`` <-
``judges``), then ``simulate``, ``figures`` (draws the tables it is given; of the project it imports
only ``stats``, for the one formatter of numbers, and ``records``, for the one rule of text from the input)
and ``studies``; at the
top, ``suite`` (data, backend, scripted user, audit), ``integrations`` (inspect_ai) and ``cli``
(the command line; ``escalation/__main__.py`` is part of it). A layer imports only layers below it,
and only through their doors (``escalation.estimators.metric``, never ``..._summary``): a private
module of another layer is imported only by a test named for it (``tests/records/test_arrow_fast_path.py``
may import ``escalation.estimators.records._arrow``). Some outside packages belong to one layer:
inspect_ai to ``integrations`` and ``cli``, the terminal libraries to ``cli`` (and the studies'
progress bars), and ``stats`` uses nothing but numpy and scipy.
"""
from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("estimators.stats", "estimators.records", "estimators.metric", "estimators.judges")
#: Every layer, from the bottom; each may import those listed for it.
LAYERS = (*ROOMS, "simulate", "figures", "studies", "suite", "integrations", "cli")
MAY_IMPORT = {
    "estimators.stats": set(),
    "estimators.records": {"estimators.stats"},
    "estimators.metric": {"estimators.stats", "estimators.records"},
    "estimators.judges": {"estimators.stats", "estimators.records", "estimators.metric"},
    "simulate": set(ROOMS),
    # records too: the names and texts the assistant under test wrote reach every figure and page, shown by the
    # one rule of escalation.estimators.records (terminal_text, html_text, plot_text...; issue 31)
    "figures": {"estimators.stats", "estimators.records"},
    "studies": {*ROOMS, "simulate", "figures"},
    "suite": {*ROOMS, "simulate"},
    "integrations": {*ROOMS, "simulate", "suite"},
    "cli": {*ROOMS, "simulate", "figures", "studies", "suite", "integrations"},
}
#: Outside packages that only some layers may import (any other layer importing one is a violation).
ONLY_IN = {"inspect_ai": {"integrations", "cli"}, "typer": {"cli"}, "click": {"cli"},
           "rich": {"cli", "studies"}}
#: The only outside packages of ``stats`` (beside the standard library and lazy_loader for its door).
STATS_USES = {"numpy", "scipy", "lazy_loader"}
#: Modules of the package root that every layer may import.
ROOT_MODULES = ("escalation", "escalation._version")


def _layer_of_module(module: str) -> str | None:
    """The layer of an absolute module name of the project; ``root`` for the package root's modules."""
    parts = module.split(".")
    if parts[0] != "escalation":
        return None
    if len(parts) == 1 or parts[1] in ("_version", "__init__"):
        return "root"
    if parts[1] == "__main__":
        return "cli"
    if parts[1] == "estimators":
        return f"estimators.{parts[2]}" if len(parts) > 2 and f"estimators.{parts[2]}" in ROOMS else "estimators"
    return parts[1] if parts[1] in LAYERS else "root"


def _module_of_file(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[0] in ("estimators", "simulate", "figures", "studies"):
        parts.insert(0, "escalation")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, root: Path):
    """``(line, absolute module name)`` of every import of the file (relative ones resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = _module_of_file(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module
            if module in ("escalation.estimators", "escalation.integrations"):  # ``from ... import metric``
                for alias in node.names:
                    yield node.lineno, f"{module}.{alias.name}"
                continue
            yield node.lineno, module
            for alias in node.names:  # ``from escalation.estimators.records import _arrow`` names a module too
                if alias.name.startswith("_") and alias.name != "__version__":
                    yield node.lineno, f"{module}.{alias.name}"


def _door(layer: str) -> str:
    return f"escalation.{layer}"


def _is_door(module: str, layer: str) -> bool:
    """Whether ``module`` is the door of ``layer`` (an integration's door is its tool's package)."""
    if layer == "integrations":
        parts = module.split(".")
        return len(parts) <= 3 and not any(p.startswith("_") for p in parts)
    return module == _door(layer)


def _named_for(test: Path, module: str) -> bool:
    """Whether a test file is named for a private module: ``_arrow`` in ``test_arrow_fast_path.py``."""
    words = test.stem.removeprefix("test_").split("_")
    private = next(p for p in module.split(".") if p.startswith("_")).lstrip("_").split("_")
    return any(words[i:i + len(private)] == private for i in range(len(words)))


def _python_files(root: Path):
    for folder in ("estimators", "simulate", "figures", "studies", "escalation", "tests", "benchmarks", "examples",
                   "tools"):
        yield from sorted((root / folder).rglob("*.py"))


def _check_outside(own: str, module: str) -> str | None:
    top = module.split(".")[0]
    if top in ONLY_IN and own not in ONLY_IN[top]:
        return f"layer {own!r} imports {top!r}, which only {' and '.join(sorted(ONLY_IN[top]))} may import"
    if own == "estimators.stats" and top not in STATS_USES and top not in sys.stdlib_module_names \
            and top != "escalation":
        return f"layer 'estimators.stats' imports {top!r}; it uses numpy and scipy only"
    return None


def import_violations(root: Path = ROOT) -> list[str]:
    """Every import that breaks the layering, as ``FILE:LINE: what is wrong``."""
    found = []
    for path in sorted(_python_files(root)):
        where = path.relative_to(root)
        is_test = where.parts[0] == "tests"
        own = None if where.parts[0] in ("tests", "benchmarks", "examples", "tools") else \
            _layer_of_module(_module_of_file(path, root))
        for line, module in _imports(path, root):
            parts = module.split(".")
            if parts[0] in ("estimators", "simulate", "figures", "studies"):
                found.append(f"{where}:{line}: imports {module!r}; installed, it is 'escalation.{module}'")
                continue
            if own is not None and own != "root" and (why := _check_outside(own, module)):
                found.append(f"{where}:{line}: {why}")
                continue
            target = _layer_of_module(module)
            if target is None or target == "root" or target == own:
                continue
            if target == "estimators":
                found.append(f"{where}:{line}: imports {module!r}; import the door of one of its rooms "
                             f"({', '.join(_door(r) for r in ROOMS)})")
                continue
            if own is None and target == "cli":
                continue  # tests and benchmarks run the command line
            if target == "cli" and own != "cli":
                found.append(f"{where}:{line}: imports the command line ({module}); nothing imports it")
                continue
            if own is not None and own != "root" and target not in MAY_IMPORT[own]:
                below = LAYERS.index(target) < LAYERS.index(own)
                found.append(f"{where}:{line}: layer {own!r} imports {module!r}, which is "
                             f"{'not one it may import' if below else 'above it'}")
                continue
            if not _is_door(module, target):
                private = any(p.startswith("_") for p in parts[1:])
                if is_test and private and _named_for(path, module):
                    continue
                found.append(f"{where}:{line}: imports {module!r} of another layer; import {_door(target)!r}")
    return found


def test_every_import_goes_down_through_a_door():
    assert import_violations() == []


@pytest.mark.parametrize("layer", [layer for layer in LAYERS if layer != "cli"] + ["cli"])
def test_each_door_lists_what_it_exports(layer):
    door = importlib.import_module(_door(layer))
    if layer != "integrations":
        assert door.__all__, f"{door.__name__} has an empty __all__"
    assert len(set(door.__all__)) == len(door.__all__), f"{door.__name__}.__all__ repeats a name"
    assert all(not name.startswith("_") for name in door.__all__)
    if layer.startswith("estimators") or layer == "integrations":
        return  # their names load lazily: tests/test_doors.py imports each
    for name in door.__all__:
        assert hasattr(door, name), f"{door.__name__}.__all__ names {name!r}, which it does not define"


PLANTED = {
    "estimators/stats/_bad.py": "from escalation.estimators.records import InputError\n",
    "estimators/records/_bad.py": "import pandas\nfrom ..metric import summarise\n",
    "estimators/metric/_bad.py": "from escalation.estimators.stats._intervals import z_value\n",
    "estimators/judges/_bad.py": "import escalation.estimators\n",
    "estimators/stats/_bad2.py": "import pandas\n",
    "simulate/_bad.py": "\nfrom escalation.estimators.records._records import Records\n",
    "figures/_bad.py": "import estimators\n",
    "studies/_bad.py": "from escalation.cli import main\n",
    "escalation/suite/_bad.py": "from escalation.cli.commands._console import console\nimport inspect_ai\n",
    "escalation/suite/_bad2.py": "from escalation.integrations.inspect_ai import escalation\n",
    "escalation/integrations/inspect_ai/_bad.py": "from escalation.suite._data import load_suite\nimport typer\n",
    "escalation/suite/_bad3.py": "from escalation.figures import plot_rates\n",
    "escalation/_bad.py": "from escalation.studies._engine import run_cells\n",
    "tests/test_bad.py": "from escalation.estimators.records._arrow import iter_records_arrow\n",
    "tests/test_arrow_ok.py": "from escalation.estimators.records._arrow import iter_records_arrow\n",
}


def test_the_checker_finds_what_it_must(tmp_path):
    """The rule itself: each kind of violation, planted in a copy of the layout, is reported with its file
    and line, inside the estimators' rooms and the top folder as between the layers."""
    for name, text in PLANTED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert import_violations(tmp_path) == sorted([
        "escalation/_bad.py:1: imports 'escalation.studies._engine' of another layer; import 'escalation.studies'",
        "escalation/integrations/inspect_ai/_bad.py:1: imports 'escalation.suite._data' of another layer; import "
        "'escalation.suite'",
        "escalation/integrations/inspect_ai/_bad.py:2: layer 'integrations' imports 'typer', which only cli may "
        "import",
        "escalation/suite/_bad.py:1: imports the command line (escalation.cli.commands._console); nothing imports it",
        "escalation/suite/_bad.py:2: layer 'suite' imports 'inspect_ai', which only cli and integrations may import",
        "escalation/suite/_bad2.py:1: layer 'suite' imports 'escalation.integrations.inspect_ai', which is above it",
        "estimators/judges/_bad.py:1: imports 'escalation.estimators'; import the door of one of its rooms "
        "(escalation.estimators.stats, escalation.estimators.records, escalation.estimators.metric, "
        "escalation.estimators.judges)",
        "estimators/metric/_bad.py:1: imports 'escalation.estimators.stats._intervals' of another layer; import "
        "'escalation.estimators.stats'",
        "estimators/records/_bad.py:2: layer 'estimators.records' imports 'escalation.estimators.metric', which is "
        "above it",
        "estimators/stats/_bad.py:1: layer 'estimators.stats' imports 'escalation.estimators.records', which is "
        "above it",
        "estimators/stats/_bad2.py:1: layer 'estimators.stats' imports 'pandas'; it uses numpy and scipy only",
        "figures/_bad.py:1: imports 'estimators'; installed, it is 'escalation.estimators'",
        "simulate/_bad.py:2: imports 'escalation.estimators.records._records' of another layer; import "
        "'escalation.estimators.records'",
        "studies/_bad.py:1: imports the command line (escalation.cli); nothing imports it",
        "tests/test_bad.py:1: imports 'escalation.estimators.records._arrow' of another layer; import "
        "'escalation.estimators.records'",
        "escalation/suite/_bad3.py:1: layer 'suite' imports 'escalation.figures', which is not one it may import",
    ])
