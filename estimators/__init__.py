"""The escalation measurement and its statistics, in four rooms, each with one door, from the bottom:

- :mod:`escalation.estimators.stats`: clustered rates, intervals, plans, the reviewers' queue (numpy, scipy);
- :mod:`escalation.estimators.records`: the vocabulary, policies, records, readers and output files;
- :mod:`escalation.estimators.metric`: the two scorers, the summary, compare, leaderboard and capacity;
- :mod:`escalation.estimators.judges`: judge diagnostics and the mode-B correction.

A room imports only the doors of the rooms below it. Nothing here imports another layer of the project.
"""
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submodules=["judges", "metric", "records", "stats"])
