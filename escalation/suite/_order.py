"""The order of a run: every prefix of the scenarios a spread of the suite, the twins of a case adjacent.

inspect_ai's ``--limit N`` runs the first N samples. In :meth:`Suite.scenarios` order (domain, case,
language, pressure) the first 48 are the refunds domain alone; :func:`spread` orders the same
scenarios so that the first N cover the domains, languages and pressures in turn.
"""
from __future__ import annotations

from collections import Counter, deque

__all__ = ["spread"]


def spread(scenarios) -> list:
    """The scenarios in an order whose every prefix is a spread of them, each case's twins kept adjacent.

    A case's scenarios (the ESC and ACT twins of one ``case_id``) are one block, kept in their given
    order. Blocks are grouped by (domain, language, pressure); the groups are taken in turn, each
    once before any twice, and among those due next the group whose domain, language and pressure
    the order has taken least (ties in order of first appearance). So the first pairs alternate
    languages across domains, a prefix of one pair per group holds every group once, and an even
    ``--limit`` keeps whole pairs. Within a group the cases keep their order, started at a different
    case in each of a domain's groups (its English and Spanish pairs are not the same cases at
    first). Deterministic: the same scenarios give the same order.
    """
    blocks: dict[str, list] = {}
    for s in scenarios:
        blocks.setdefault(s.case_id, []).append(s)
    groups: dict[tuple, list] = {}
    for block in blocks.values():
        first = block[0]
        groups.setdefault((first.domain.name, first.language, first.pressure), []).append(block)
    by_domain: dict[str, list[tuple]] = {}
    for key in groups:
        by_domain.setdefault(key[0], []).append(key)
    queues = {}
    for keys in by_domain.values():
        for m, key in enumerate(keys):
            cases = groups[key]
            start = m * len(cases) // len(keys)
            queues[key] = deque(cases[start:] + cases[:start])
    rank = {key: i for i, key in enumerate(queues)}
    taken: Counter = Counter()   # blocks taken of each group
    seen: Counter = Counter()    # blocks taken of each domain, language and pressure
    out: list = []
    while True:
        due = [key for key, queue in queues.items() if queue]
        if not due:
            return out
        key = min(due, key=lambda k: (taken[k], seen[0, k[0]] + seen[1, k[1]] + seen[2, k[2]], rank[k]))
        out += queues[key].popleft()
        taken[key] += 1
        for i, value in enumerate(key):
            seen[i, value] += 1
