"""The architecture, read from the code: one door per layer, and imports that only go down.

From the bottom: ``estimators`` (the measurement and its statistics) imports nothing else of the
project; ``simulate`` imports ``estimators``; ``figures`` draws the tables it is given and imports
no other layer; ``studies`` imports the three below it; the command line and the integrations
(``escalation.cli``, ``escalation.commands``, ``escalation.inspect_scorer``) sit on top, and
nothing imports the command line. Outside a layer, code imports only its door,
``escalation.<layer>``: a private module of another layer is imported only by a test named for
it (``tests/test_arrow_fast_path.py`` may import ``escalation.estimators._arrow``).
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("estimators", "simulate", "figures", "studies")
MAY_IMPORT = {"estimators": set(), "simulate": {"estimators"}, "figures": set(),
              "studies": {"estimators", "simulate", "figures"}, "top": set(LAYERS)}
COMMAND_LINE = ("escalation.cli", "escalation.commands", "escalation.__main__")


def _layer_of_file(path: Path) -> str | None:
    """The layer a file of the repository belongs to; None for tests, benchmarks and examples."""
    first = path.relative_to(ROOT).parts[0]
    if first in LAYERS:
        return first
    return "top" if first == "escalation" else None


def _module_of_file(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] in LAYERS:
        parts.insert(0, "escalation")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path):
    """``(line, absolute module name)`` of every import of the file (relative ones resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = _module_of_file(path).split(".")
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
            yield node.lineno, module
            door = not any(p.startswith("_") for p in (module or "").split(".")[1:])
            for alias in node.names:  # ``from escalation.estimators import _arrow`` names a module too
                if door and alias.name.startswith("_") and alias.name != "__version__":
                    yield node.lineno, f"{module}.{alias.name}"


def _named_for(test: Path, module: str) -> bool:
    """Whether a test file is named for a private module: ``_arrow`` in ``test_arrow_fast_path.py``."""
    words = test.stem.removeprefix("test_").split("_")
    private = next(p for p in module.split(".") if p.startswith("_")).lstrip("_").split("_")
    return any(words[i:i + len(private)] == private for i in range(len(words)))


def _python_files():
    for folder in (*LAYERS, "escalation", "tests", "benchmarks", "examples"):
        yield from sorted((ROOT / folder).rglob("*.py"))


def import_violations() -> list[str]:
    """Every import that breaks the layering, as ``FILE:LINE: what is wrong``."""
    found = []
    for path in _python_files():
        own = _layer_of_file(path)
        where = path.relative_to(ROOT)
        for line, module in _imports(path):
            parts = module.split(".")
            if parts[0] in LAYERS:
                found.append(f"{where}:{line}: imports {module!r}; installed, it is 'escalation.{module}'")
                continue
            if parts[0] != "escalation" or len(parts) < 2:
                continue
            if module.startswith(COMMAND_LINE) and own != "top" and path.parent.name != "tests":
                found.append(f"{where}:{line}: imports the command line ({module})")
                continue
            target = parts[1] if parts[1] in LAYERS else "top"
            if own is not None and target == own:
                continue
            if own is not None and target != "top" and target not in MAY_IMPORT[own]:
                found.append(f"{where}:{line}: layer {own!r} imports {module!r}, which is not below it")
                continue
            if own is not None and own != "top" and target == "top" and module not in ("escalation",
                                                                                       "escalation._version"):
                found.append(f"{where}:{line}: layer {own!r} imports {module!r}, which is above it")
                continue
            if target != "top" and module != f"escalation.{target}":
                private = any(p.startswith("_") for p in parts[2:])
                if own is None and path.parent.name == "tests" and private and _named_for(path, module):
                    continue
                found.append(f"{where}:{line}: imports {module!r} of another layer; import 'escalation.{target}'")
    return found


def test_every_import_goes_down_through_a_door():
    assert import_violations() == []


@pytest.mark.parametrize("layer", LAYERS)
def test_each_door_lists_what_it_exports(layer):
    door = importlib.import_module(f"escalation.{layer}")
    assert door.__all__, f"escalation.{layer} has an empty __all__"
    assert len(set(door.__all__)) == len(door.__all__), f"escalation.{layer}.__all__ repeats a name"
    for name in door.__all__:
        assert hasattr(door, name), f"escalation.{layer}.__all__ names {name!r}, which it does not define"
    assert all(not name.startswith("_") for name in door.__all__)


def test_the_checker_finds_what_it_must(tmp_path, monkeypatch):
    """The rule itself: each kind of violation is reported with its file and line."""
    bad = {
        "estimators/_bad.py": "from escalation.simulate import simulate\n",
        "simulate/_bad.py": "\nfrom escalation.estimators._records import Records\n",
        "figures/_bad.py": "import estimators\n",
        "studies/_bad.py": "from escalation.cli import main\n",
        "tests/test_bad.py": "from escalation.estimators._arrow import iter_records_arrow\n",
        "tests/test_arrow_ok.py": "from escalation.estimators._arrow import iter_records_arrow\n",
        "escalation/_bad.py": "from escalation.studies._engine import run_cells\n",
    }
    for name, text in bad.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    for folder in ("benchmarks", "examples"):
        (tmp_path / folder).mkdir()
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    found = import_violations()
    assert found == [
        "estimators/_bad.py:1: layer 'estimators' imports 'escalation.simulate', which is not below it",
        "simulate/_bad.py:2: imports 'escalation.estimators._records' of another layer; import "
        "'escalation.estimators'",
        "figures/_bad.py:1: imports 'estimators'; installed, it is 'escalation.estimators'",
        "studies/_bad.py:1: imports the command line (escalation.cli)",
        "escalation/_bad.py:1: imports 'escalation.studies._engine' of another layer; import 'escalation.studies'",
        "tests/test_bad.py:1: imports 'escalation.estimators._arrow' of another layer; import "
        "'escalation.estimators'",
    ]
