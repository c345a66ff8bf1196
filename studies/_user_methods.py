"""A researcher's own methods and grids in the studies: loading ``NAME=MODULE:FUNCTION``, the identity of a
function, the checks of what it returns, and the grids of TOML files.

A **method** is a function of the researcher's that the study runs beside its own on the same data
sets: in the coverage study ``f(totals, sizes, confidence) -> (low, high)``, in the differences study
``f(totals_a, sizes_a, totals_b, sizes_b, confidence) -> (low, high)``; ``totals`` and ``sizes`` are
integer arrays of shape (data sets, scenarios), one row per simulated data set, and ``low`` and
``high`` float arrays of shape (data sets,). A NaN bound makes that data set's interval undefined: it
does not cover and is neither miss. It is given as a function (Python) or as ``MODULE:FUNCTION``, where
MODULE is an importable module or the path of a ``.py`` file (command line, or a string in Python). A
function is identified by where it comes from (``MODULE:FUNCTION``, a file by its resolved path) and the
SHA-256 of its source file: both enter ``run-args.json``, so a run resumes only with the same code.

A module read from a file is registered with cloudpickle to be pickled by value, so the workers of a
run (local processes or a Dask cluster) receive its code and need not find the file.

A **grid** replaces a study's design by the full cross product of lists of values: a TOML file, or a
dict of the same keys in Python. Each study names its keys (:class:`GridKey`); a missing list, an unknown
key or a bad value is an :class:`~escalation.estimators.records.InputError` naming the file and the key.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import math
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from escalation.estimators.records import InputError

__all__ = ["SUFFICIENT_STATISTICS", "sufficient", "UserFunction", "user_functions", "checked_bounds", "GridKey",
           "read_grid", "function_identity", "CellWithOptions"]

#: What a coverage method may declare it depends on (``f.sufficient``), besides the cell's fixed sizes and the
#: confidence: the total ``Y = sum_j y_j`` of the cluster totals, or ``Y`` and ``S = sum_j y_j^2``. These are
#: the statistics that :func:`escalation.estimators.stats.exact_coverage` enumerates (``S`` with equal sizes only).
SUFFICIENT_STATISTICS = ("total", "total-and-squares")
#: A method's name: a letter or digit, then letters, digits and ``_ . + -`` (it labels tables and file rows).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}")


def sufficient(statistics: str) -> Callable[[Callable], Callable]:
    """Declare that a coverage method depends on the data only through ``statistics`` (a decorator).

    Sets ``function.sufficient``; the coverage study then computes the method's exact coverage in the
    beta-binomial cells where the enumeration of those statistics is exact (``"total"``: every cell;
    ``"total-and-squares"``: cells of equal sizes), by calling the function on one data set of each
    enumerated state. A false declaration gives a wrong exact value: the report's validation (Monte
    Carlo against exact, in MCSE) shows it.

    Parameters
    ----------
    statistics : {"total", "total-and-squares"}
        ``"total"``: the interval is a function of ``Y = sum_j y_j`` (and the sizes), as Wilson or
        Wilson-Kish with a fixed rho; ``"total-and-squares"``: of ``Y`` and ``S = sum_j y_j^2``, as any
        interval that reads an ANOVA or moment estimate of rho from clusters of equal size.

    Examples
    --------
    >>> @sufficient("total")
    ... def plain_wilson(totals, sizes, confidence): ...
    >>> plain_wilson.sufficient
    'total'
    """
    if statistics not in SUFFICIENT_STATISTICS:
        raise ValueError(f"`statistics` must be one of {', '.join(SUFFICIENT_STATISTICS)}, got {statistics!r}")

    def mark(function: Callable) -> Callable:
        function.sufficient = statistics  # type: ignore[attr-defined]  # a function takes any attribute
        return function
    return mark


@dataclass(frozen=True)
class UserFunction:
    """A researcher's function in a study: its ``name`` there, the ``function``, where it comes from
    (``origin``: ``MODULE:FUNCTION``, a file by its resolved path), the SHA-256 of its source and the
    statistics it declares it depends on (``sufficient``, None when it declares none)."""

    name: str
    function: Callable
    origin: str
    source_sha256: str
    sufficient: str | None = None

    def identity(self) -> dict:
        """What ``run-args.json`` records of it: a run resumes only with the same."""
        return {"name": self.name, "function": self.origin, "source_sha256": self.source_sha256,
                "sufficient": self.sufficient}


@dataclass(frozen=True)
class CellWithOptions:
    """A study's cell function run with a researcher's options: ``function(row, seed_seq, **options)``.

    Picklable for the workers (a function from a file travels by value). The engine records a cell
    function by its module and qualified name in ``run-args.json``: this one takes ``function``'s, and the
    study records the options there beside it (its run facts).
    """

    function: Callable
    options: dict

    def __post_init__(self):
        object.__setattr__(self, "__module__", self.function.__module__)
        object.__setattr__(self, "__qualname__", self.function.__qualname__)

    def __call__(self, row: dict, seed_seq) -> list[dict]:
        return self.function(row, seed_seq, **self.options)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def function_identity(function: Callable) -> tuple[str, str]:
    """``(origin, source_sha256)`` of a function: ``MODULE:QUALNAME`` (a module read from a file: its path) and
    the SHA-256 of its source file, else of its source text, else of its compiled code."""
    module = sys.modules.get(getattr(function, "__module__", None) or "")
    path = getattr(module, "__file__", None)
    where = path if getattr(module, "__escalation_user_file__", False) else getattr(function, "__module__", "?")
    origin = f"{where}:{getattr(function, '__qualname__', type(function).__qualname__)}"
    if path and Path(path).is_file():
        return origin, _sha256(Path(path).read_bytes())
    try:
        return origin, _sha256(inspect.getsource(function).encode())
    except (OSError, TypeError):
        code = getattr(function, "__code__", None)
        return origin, _sha256(code.co_code if code is not None else repr(function).encode())


def _register_by_value(module) -> None:
    """Pickle ``module``'s functions by value (cloudpickle), so that workers need not import it."""
    try:
        import cloudpickle
    except ImportError:  # joblib before 1.5 carried its own copy
        from joblib.externals import cloudpickle  # type: ignore[no-redef]
    cloudpickle.register_pickle_by_value(module)


def _module_of_file(path: Path, source: str):
    """The module of the ``.py`` file ``path``, executed once per path and content and registered in
    ``sys.modules``."""
    if not path.is_file():
        raise InputError(f"no such file {str(path)!r}", source=source)
    stem = re.sub(r"\W", "_", path.stem)
    key = _sha256(str(path).encode() + b"\0" + path.read_bytes())
    name = f"_escalation_user_{stem}_{key[:12]}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"cannot read {str(path)!r} as a Python module", source=source)
    module = importlib.util.module_from_spec(spec)
    module.__escalation_user_file__ = True  # type: ignore[attr-defined]  # function_identity names it by its path
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # the researcher's module failed: say where and why, in one line
        del sys.modules[name]
        raise InputError(f"importing {str(path)!r} failed: {type(err).__name__}: {err}", source=source) from None
    _register_by_value(module)
    return module


def _load(spec: str, source: str) -> Callable:
    """The function ``MODULE:FUNCTION`` (MODULE an importable module or a ``.py`` file)."""
    module_name, colon, attribute = spec.rpartition(":")
    if not colon or not module_name or not attribute:
        raise InputError(f"{spec!r} is not MODULE:FUNCTION", source=source)
    if module_name.endswith(".py") or "/" in module_name or "\\" in module_name:
        module = _module_of_file(Path(module_name).expanduser().resolve(), source)
    else:
        try:
            module = importlib.import_module(module_name)
        except ImportError as err:
            raise InputError(f"cannot import module {module_name!r} ({err}); give an importable module or the path "
                             "of a .py file", source=source) from None
    function: Any = module
    for part in attribute.split("."):
        function = getattr(function, part, None)
        if function is None:
            raise InputError(f"module {module_name!r} has no function {attribute!r}", source=source)
    if not callable(function):
        raise InputError(f"{spec!r} is not a function", source=source)
    return function


def user_functions(functions: Mapping[str, Callable | str] | None, *, builtin,
                   statistics: bool = True) -> tuple[UserFunction, ...]:
    """The researcher's functions of a study, loaded and checked, in the order given.

    Parameters
    ----------
    functions : mapping of str to callable or str, or None
        ``{name: function}``; a str is ``MODULE:FUNCTION``.
    builtin : sequence of str
        The study's own method names, which a researcher's may not take.
    statistics : bool
        Read the ``sufficient`` declaration of each function (coverage methods).
    """
    out = []
    for name, given in (functions or {}).items():
        source = f"method {name!r}"
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise InputError("a name must be 1 to 40 letters, digits and _ . + - (from a letter or digit)",
                             source=source)
        if name in builtin:
            raise InputError(f"is the name of a built-in method of the study ({', '.join(builtin)}); give yours "
                             "another name", source=source)
        function = _load(given, source) if isinstance(given, str) else given
        if not callable(function):
            raise InputError(f"must be a function or MODULE:FUNCTION, got {type(given).__name__}", source=source)
        declared = getattr(function, "sufficient", None) if statistics else None
        if declared is not None and declared not in SUFFICIENT_STATISTICS:
            raise InputError(f"declares sufficient = {declared!r}; it must be one of "
                             f"{', '.join(map(repr, SUFFICIENT_STATISTICS))} (or no such attribute)", source=source)
        origin, digest = function_identity(function)
        out.append(UserFunction(name, function, origin, digest, declared))
    return tuple(out)


def checked_bounds(name: str, result, datasets: int) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` that method ``name`` returned for ``datasets`` data sets, as float arrays.

    Raises :class:`InputError` unless it is two arrays of shape ``(datasets,)``, of numbers, with
    ``low <= high`` wherever both are defined.
    """
    where = f"method {name!r}"
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise InputError(f"returned {type(result).__name__}; it must return (low, high), two float arrays of shape "
                         f"(data sets,) = ({datasets},)", source=where)
    try:
        low, high = (np.asarray(bound, dtype=float) for bound in result)
    except (TypeError, ValueError) as err:
        raise InputError(f"returned bounds that are not numbers ({err})", source=where) from None
    for bound, side in ((low, "low"), (high, "high")):
        if bound.shape != (datasets,):
            raise InputError(f"returned {side} of shape {bound.shape}; it must have shape (data sets,) = "
                             f"({datasets},)", source=where)
    wrong = int(np.count_nonzero(low > high))
    if wrong:
        raise InputError(f"returned low > high in {wrong} of {datasets} data sets", source=where)
    return low, high


@dataclass(frozen=True)
class GridKey:
    """One key of a study's grid: its values' ``kind`` (``float``, ``int`` or ``str``), the test each value
    passes (``valid``) and what the error says they must be (``says``); ``optional`` with its ``default``
    when the key may be left out; ``scalar`` for one value, not a list."""

    kind: type
    valid: Callable[[Any], bool]
    says: str
    optional: bool = False
    default: Any = None
    scalar: bool = False


def _value(key: str, spec: GridKey, value, source: str):
    """One value of ``key``, checked and converted."""
    if spec.kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        value = float(value) if ok else value
    elif spec.kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, str)
    if not ok or not spec.valid(value):
        shown = repr(value) if isinstance(value, (int, float, str)) else type(value).__name__
        raise InputError(f"must be {'' if spec.scalar else 'a list of '}{spec.says}, got {shown}", source=source,
                         field=key)
    return value


def read_grid(grid, keys: Mapping[str, GridKey], *, refused: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A grid: the TOML file ``grid`` (a path), or a dict, with the lists of ``keys``, checked.

    Returns ``{key: tuple of values}`` (a scalar key: its value; an optional key left out: its
    default). Raises :class:`InputError` naming the file (or ``grid``) and the key: a file that is not
    TOML, an unknown key, a key of ``refused`` (``{key: why}``), a missing list, an empty list, a repeated
    value, a value of the wrong kind or out of range.
    """
    if isinstance(grid, Mapping):
        source, table = "grid", dict(grid)
    else:
        source = str(grid)
        try:
            table = tomllib.loads(Path(grid).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError("no such grid file", source=source) from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
            raise InputError(f"not a TOML file ({err})", source=source) from None
    for key, why in (refused or {}).items():
        if key in table:
            raise InputError(why, source=source, field=key)
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r}; a grid has the keys {', '.join(keys)}", source=source)
    out: dict[str, Any] = {}
    for key, spec in keys.items():
        if key not in table:
            if not spec.optional:
                raise InputError(f"missing; a grid has the keys {', '.join(keys)}", source=source, field=key)
            out[key] = spec.default
            continue
        given = table[key]
        if spec.scalar:
            out[key] = _value(key, spec, given, source)
            continue
        if not isinstance(given, (list, tuple)) or not given:
            raise InputError(f"must be a non-empty list of {spec.says}", source=source, field=key)
        values = tuple(_value(key, spec, v, source) for v in given)
        repeated = next((v for i, v in enumerate(values) if v in values[:i]), None)
        if repeated is not None:
            raise InputError(f"repeats {repeated!r}", source=source, field=key)
        out[key] = values
    return out
