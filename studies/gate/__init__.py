"""The gate study (``escalation study gate``): wrong passes, wrong fails and the samples to a decision of the
fixed, naive and sequential rules of ``escalation gate``; design, cell function, report and run in :mod:`._gate`."""
from ._gate import run_gate_study

__all__ = ["run_gate_study"]
