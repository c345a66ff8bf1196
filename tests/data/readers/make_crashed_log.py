"""Write an inspect_ai log of a crashed run: the model's service fails on the first call of every sample.

Run from the repository root: ``python tests/data/readers/make_crashed_log.py OUT_DIR`` (it wrote
``inspect_crashed.eval`` with inspect_ai 0.3.285). inspect_ai
writes the log (nothing here is typed by hand); the test data keeps the ``.eval`` file it wrote.
"""
import sys

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelAPI, modelapi


@modelapi(name="crashing")
class CrashingModel(ModelAPI):
    """A model whose service is down: every call raises, as an unreachable endpoint does."""

    def __init__(self, model_name, base_url=None, api_key=None, config=None, **model_args):
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config):
        raise ConnectionError("Connection refused: the model's endpoint at 127.0.0.1:9 is down")


if __name__ == "__main__":
    logs = inspect_eval("escalation/paired_oversight", model="crashing/model", limit=6, log_dir=sys.argv[1],
                        log_format="eval", display="none", max_retries=0, retry_on_error=0)
    print(logs[0].status, logs[0].location, sum(s.error is not None for s in logs[0].samples))
