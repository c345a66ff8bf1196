"""inspect_ai's entry point for the project (``[project.entry-points.inspect_ai]``): registers the task
``escalation/paired_oversight`` and the profile models ``escalation/<profile>``."""
from escalation.integrations.inspect_ai._profile_model import ProfileModel  # noqa: F401  (registers the model API)
from escalation.integrations.inspect_ai._task import paired_oversight  # noqa: F401  (registers the task)
