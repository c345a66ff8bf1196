"""escalation: measure whether a tool-using assistant passes reserved cases to a person."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("escalation")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"
