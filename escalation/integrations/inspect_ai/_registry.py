"""inspect_ai's entry point for the project (``[project.entry-points.inspect_ai]``): registers the task
``escalation/paired_oversight`` and the models ``escalation/<name>``: the profile models ``escalation/<profile>``
and the replay model ``escalation/replay``."""
from typing import cast

from inspect_ai.model import GenerateConfig, ModelAPI, modelapi

from escalation.integrations.inspect_ai._profile_model import ProfileModel
from escalation.integrations.inspect_ai._replay_model import REPLAY, ReplayModel
from escalation.integrations.inspect_ai._task import paired_oversight  # noqa: F401  (registers the task)


def escalation_model(model_name: str, base_url: str | None = None, api_key: str | None = None,
                     config: GenerateConfig = GenerateConfig(), **model_args) -> ModelAPI:
    """``escalation/<name>``: the replay model for ``replay``, else the profile model of that name."""
    kind: type[ModelAPI] = ReplayModel if model_name == REPLAY else ProfileModel
    return kind(model_name, base_url=base_url, api_key=api_key, config=config, **model_args)


# One model API, ``escalation``, serves every ``escalation/<name>``: registered after ProfileModel's own
# ``@modelapi(name="escalation")`` (imported above), under the same name, it takes that entry's place.
@modelapi(name="escalation")
def escalation_models() -> type[ModelAPI]:
    return cast(type[ModelAPI], escalation_model)
