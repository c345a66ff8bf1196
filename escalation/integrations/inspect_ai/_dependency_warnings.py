"""The warnings of dependencies that the project's use of inspect_ai triggers, filtered where it triggers them.

inspect_ai 0.3.285 builds the retry wait of every model call with tenacity's deprecated
``initial`` argument (``inspect_ai/model/_retry.py``, ``wait_exponential_jitter(initial=3, ...)``;
tenacity 9.2 warns "The 'initial' parameter is deprecated, use 'multiplier' instead"): one
DeprecationWarning per call, 2,256 in one run of the test suite, shown wherever warnings are
(pytest, ``python -W default``, ``PYTHONWARNINGS``). Nothing a user can change: the task's solver
and the judges call :func:`quiet_inspect_retry_warning` before they call a model, which ignores
that message of that category raised from that module, and nothing else.
"""
from __future__ import annotations

import warnings

__all__ = ["quiet_inspect_retry_warning", "RETRY_WARNING"]

#: The message (a regular expression, matched at its start) of the warning filtered.
RETRY_WARNING = r"The 'initial' parameter is deprecated"


def quiet_inspect_retry_warning() -> None:
    """Ignore tenacity's deprecation of ``initial`` raised from inspect_ai's model retry, and only it.

    Idempotent (:func:`warnings.filterwarnings` moves an existing equal filter to the front rather
    than adding another), so it is called before each model call: a filter installed once at import
    would be lost where warnings filters are reset between runs (pytest resets them per test).
    """
    warnings.filterwarnings("ignore", message=RETRY_WARNING, category=DeprecationWarning,
                            module=r"inspect_ai\.model\._retry\Z")
