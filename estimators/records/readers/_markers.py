"""What the records of a JSONL file or JSON list look like, for auto-detection.

One pass over the records collects *markers*: shapes that only one provider writes. The
sniffers of the record formats (``jsonl``, ``openai``, ``openai-responses``,
``anthropic``, ``tau-bench``) decide from these markers alone.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._source import Document

__all__ = ["record_markers", "chat_items", "RESPONSES_ITEM_TYPES"]

RESPONSES_ITEM_TYPES = frozenset({
    "message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
    "reasoning", "web_search_call", "file_search_call", "computer_call", "computer_call_output",
    "code_interpreter_call", "image_generation_call", "local_shell_call", "local_shell_call_output",
    "mcp_call", "mcp_list_tools", "item_reference",
})
_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use",
                               "web_search_tool_result", "mcp_tool_use", "mcp_tool_result"})
_RESPONSES_PARTS = frozenset({"input_text", "output_text"})
_OPENAI_ROLES = frozenset({"tool", "function", "developer"})


def chat_items(record: dict):
    """The chat of a record: ``messages``, ``items``, or ``input`` followed by ``output`` (a list of items, or a
    whole Response object, ``Response.model_dump()``, whose own ``output`` items are then the chat's)."""
    for key in ("messages", "items"):
        if isinstance(record.get(key), list):
            return record[key]
    inp, out = record.get("input"), record.get("output")
    if isinstance(out, dict) and out.get("object") == "response" and isinstance(out.get("output"), list):
        out = out["output"]
    if isinstance(inp, list) or isinstance(out, list):
        items = inp if isinstance(inp, list) else ([{"role": "user", "content": inp}] if isinstance(inp, str) else [])
        return items + (out if isinstance(out, list) else [])
    return None


def _is_chat_item(item) -> bool:
    """A provider message or item; a canonical message has a ``turn`` instead."""
    return isinstance(item, dict) and "turn" not in item and (
        "content" in item or "tool_calls" in item or "type" in item or "function_call" in item)


def _item_markers(item, found: set) -> None:
    kind = item.get("type")
    if isinstance(kind, str) and kind in RESPONSES_ITEM_TYPES:
        found.add("responses")
    elif "tool_calls" in item or "function_call" in item or (isinstance(item.get("role"), str)
                                                             and item["role"] in _OPENAI_ROLES):
        found.add("openai")
    content = item.get("content")
    if isinstance(content, list):
        for part in content:
            part_type = part.get("type") if isinstance(part, dict) and isinstance(part.get("type"), str) else None
            if part_type in _ANTHROPIC_BLOCKS:
                found.add("anthropic")
            elif part_type in _RESPONSES_PARTS:
                found.add("responses")


def record_markers(doc: Document) -> set[str] | None:
    """Markers of a JSONL file or JSON list (None for other documents), computed once.

    ``canonical`` (a SPEC section 6 record), ``tau-bench`` (a run with ``traj``),
    ``chat`` (any provider chat), ``openai``, ``responses``, ``anthropic`` (shapes only
    that provider writes). A value that is not an object says nothing of the format: the
    reader of the format that the other records show names its line (SPEC section 6).
    """
    if "markers" in doc.cache:
        return doc.cache["markers"]
    values: Iterable[Any]
    if doc.kind == "jsonl":
        values = (v for _, v in doc.data)
    elif doc.kind == "json" and isinstance(doc.data, list):
        values = doc.data
    elif doc.kind == "json" and isinstance(doc.data, dict) and not {"eval", "simulations"} & set(doc.data):
        values = [doc.data]
    else:
        doc.cache["markers"] = None
        return None
    found: set[str] = set()
    for value in values:
        if not isinstance(value, dict):
            continue
        if "traj" in value and "task_id" in value:
            found.add("tau-bench")
            continue
        items = chat_items(value)
        if "tool_calls" in value or (items and not any(map(_is_chat_item, items))):
            found.add("canonical")
            continue
        if not items:
            continue  # no chat and no record: says nothing about the format
        found.add("chat")
        for item in items:
            if isinstance(item, dict):
                _item_markers(item, found)
    doc.cache["markers"] = found
    return found
