"""How the judges call a model (see the notes of :mod:`._judges`): inspect_ai chat messages, the network guard
(no plain http to another machine, no redirects) and the one event loop every judge of the process runs on.
"""
from __future__ import annotations

import asyncio
import ipaddress
import re
import threading
import types
from collections import deque
from typing import Any, Awaitable, Callable, Coroutine, Sequence, TypeVar
from urllib.parse import urlsplit

import numpy as np
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, Model, get_model

__all__: list[str] = []


# ------------------------------------------------------------------ calling the model

def _chat(messages: Sequence[dict]):
    """inspect_ai chat messages of ``{"role", "content"}`` dicts (system and user only)."""
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser}
    return [kinds[m["role"]](content=m["content"]) for m in messages]


def _one_line(text: object, limit: int = 300) -> str:
    text = re.sub(r"\[/?bold\]", "", str(text))  # inspect_ai's rich markup in its errors
    return " ".join(text.split())[:limit]


def _resolve(model) -> Model:
    if isinstance(model, Model):
        return model
    if isinstance(model, str) and model.strip():
        return get_model(model.strip())
    raise TypeError(f"model must be an inspect_ai model name such as 'openai/gpt-4o-mini' or an inspect_ai Model, "
                    f"got {model!r}")


# ------------------------------------------------------------------ the network
#
# inspect_ai builds the providers' HTTP clients with follow_redirects=True (inspect_ai/_util/
# http_defaults.py and http_defaults_httpx2.py, default_client_kwargs), as the OpenAI and Anthropic
# SDKs do (their DefaultHttpxClient). On a redirect to another origin httpx drops only the
# Authorization header (httpx/_client.py, BaseClient._redirect_headers, 0.28): Anthropic's
# X-Api-Key, Azure's api-key and Google's x-goog-api-key go to the new host, and a 307 or 308
# sends the conversations there again. A model's endpoint has no reason to redirect, so the
# judges' model clients follow none.

_HTTP_PACKAGES = ("httpx", "httpx2")
_LEAVES = (str, bytes, bytearray, int, float, complex, type, types.ModuleType, types.FunctionType, types.MethodType,
           types.BuiltinFunctionType)
_VISITS = 5_000  # objects searched for HTTP clients and base URLs, from the model's API object


def _is_http_client(obj) -> bool:
    """Whether ``obj`` is an httpx (or httpx2) client, or an SDK's subclass of one."""
    return any(cls.__name__ in ("Client", "AsyncClient") and cls.__module__.split(".")[0] in _HTTP_PACKAGES
               for cls in type(obj).__mro__)


def _reachable(root):
    """Objects reachable from ``root`` through instance attributes and the items of containers,
    breadth first (at most ``_VISITS``; not into modules, classes, functions or an HTTP client):
    a provider keeps its SDK client, which keeps its HTTP client."""
    seen, queue = set(), deque([root])
    while queue and len(seen) < _VISITS:
        obj = queue.popleft()
        if id(obj) in seen or obj is None or isinstance(obj, _LEAVES):
            continue
        seen.add(id(obj))
        yield obj
        if isinstance(obj, dict):
            queue.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            queue.extend(obj)
        elif not _is_http_client(obj) and isinstance(getattr(obj, "__dict__", None), dict):
            queue.extend(vars(obj).values())


def _is_local(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guard(model: Model) -> None:
    """Refuse a model reached over plain http at another machine; stop its HTTP clients following
    redirects (see the module notes)."""
    for obj in _reachable(model.api):
        attributes = vars(obj) if isinstance(getattr(obj, "__dict__", None), dict) else {}
        for url in (attributes.get("base_url"), attributes.get("_base_url")):
            parts = urlsplit(str(url or ""))
            if parts.scheme.lower() == "http" and not _is_local(parts.hostname):
                raise ValueError(f"the model {model} is reached at {url}, plain http to another machine: the key "
                                 "and the conversations would cross the network unencrypted. Use https:// (http "
                                 "only to localhost, 127.0.0.1 or ::1)")
        if _is_http_client(obj):
            obj.follow_redirects = False


def _check_concurrency(value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"max_concurrency must be an integer >= 1, got {value!r}")
    return int(value)


_LOOP: asyncio.AbstractEventLoop | None = None
_LOOP_LOCK = threading.Lock()


def _judge_loop() -> asyncio.AbstractEventLoop:
    """The event loop every judge of this process runs its calls on (started on first use)."""
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None or _LOOP.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="escalation-judges", daemon=True).start()
            _LOOP = loop
        return _LOOP


_T = TypeVar("_T")


def _run(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coroutine`` on the judges' loop and wait for its result (from any thread)."""
    loop = _judge_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        coroutine.close()
        raise RuntimeError("a judge's synchronous method was called from the judges' own event loop; await its "
                           "_async method instead")
    future = asyncio.run_coroutine_threadsafe(coroutine, loop)
    try:
        return future.result()
    except BaseException:  # KeyboardInterrupt included: stop the calls still running
        future.cancel()
        raise


async def _gather_bounded(calls: Sequence[Callable[[], Awaitable]], limit: int) -> list:
    """Await each call, at most ``limit`` at a time; results in call order. The first failure
    cancels the calls still running and is raised."""
    semaphore = asyncio.Semaphore(limit)

    async def one(call):
        async with semaphore:
            return await call()

    tasks = [asyncio.ensure_future(one(call)) for call in calls]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
