"""The names of the log formats the readers read (``--format``), in a module that imports nothing, so that a
command's ``--help`` can list them without importing the readers (which import pandas)."""

__all__ = ["FORMATS"]

#: Every format a reader reads; ``auto`` (detection) is not one of them.
FORMATS = ("jsonl", "openai", "openai-responses", "anthropic", "inspect", "tau-bench", "tau2-bench", "otel",
           "sharegpt", "gemini", "bedrock-converse", "openai-agents", "langfuse", "openinference")
