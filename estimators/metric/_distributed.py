"""The Dask cluster that work which outgrows one machine runs on (``--backend dask``): the studies' cells and the
logs of ``escalation score``.

``dask.distributed`` is imported only here, when a cluster is asked for: a run on this machine never loads it.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from ..records import InputError

__all__ = ["BACKENDS", "dask_client"]

#: Where work runs: ``local`` (processes of this machine) or ``dask`` (a Dask cluster).
BACKENDS = ("local", "dask")


@contextmanager
def dask_client(scheduler: str | None = None, n_jobs: int = -1) -> Iterator:
    """A ``distributed.Client``: of the running scheduler at ``scheduler``, else of a ``LocalCluster`` started here.

    The local cluster has ``n_jobs`` single-thread worker processes (``-1``: one a core) and listens on
    127.0.0.1 only, its dashboard included; the client, and a cluster started here, are closed on the way out,
    also after an error.

    Raises
    ------
    InputError
        Without dask.distributed installed (naming the extra), or when the scheduler cannot be reached.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError("the dask backend needs dask.distributed: python -m pip install -e \".[dask]\" (or "
                         "pip install 'dask[distributed]')", field="--backend") from None
    with ExitStack() as stack:
        if scheduler is None:
            workers = (os.cpu_count() or 1) if n_jobs == -1 else n_jobs
            # this machine only: the scheduler, the workers and the dashboard (":0" would serve it on every
            # interface) listen on 127.0.0.1
            cluster = stack.enter_context(LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                       host="127.0.0.1", dashboard_address="127.0.0.1:0"))
            client = stack.enter_context(Client(cluster))
        else:
            try:
                client = stack.enter_context(Client(scheduler))
            except (OSError, TimeoutError, ValueError) as err:
                raise InputError(f"cannot reach the Dask scheduler at {scheduler} "
                                 f"({' '.join(str(err).split())})", field="--scheduler") from None
        yield client
