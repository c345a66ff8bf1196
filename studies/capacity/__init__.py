"""The capacity study (``escalation study capacity``): the assistants and the queue, design, cell function,
report and run in :mod:`._capacity`."""
from ._capacity import run_capacity_study

__all__ = ["run_capacity_study"]
