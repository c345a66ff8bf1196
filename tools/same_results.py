"""A "no result changes" guard for a refactor: record what the command line computes, then compare two records.

    python tools/same_results.py record OUTDIR [--repo PATH] [--python PATH]
    python tools/same_results.py compare BEFORE AFTER

``record`` runs a fixed list of ``escalation`` commands (``PYTHON -m escalation ...``, in a subprocess, from
the repository at ``--repo``, default the repository that holds this script), each into its own subfolder
``OUTDIR/<step>/``: ``out/`` is the command's ``--out`` folder (when it has one), ``stdout.txt`` and
``stderr.txt`` what it printed, ``command.json`` its arguments and exit code. ``OUTDIR/record.json`` lists
the steps and what ``compare`` needs to normalise (the repository, the output folder, the version, the
date). The commands:

1. ``escalation reproduce --smoke``;
2. every study that ``escalation study --help`` lists, ``--smoke``;
3. ``escalation score`` on each folder of the conformance set (``.../conformance/<set>/``: records.jsonl
   with its policy.json, ``--mode`` from the set's README, as tests/metric/test_conformance.py scores them) and
   on every log of ``examples/data`` (the tau-bench runs with examples/tau-bench-airline.policy.json, as
   docs/tutorials/score-your-logs.md; the inspect_ai logs with the same policy, one by one and as a folder, as
   tests/e2e/test_inputs.py: they carry no label, so exit 3; and one by one with a labels file);
4. ``escalation simulate`` of three profiles on the same scenarios and their scores; ``escalation
   compare`` of two score folders, ``escalation leaderboard`` on the example logs and on the simulated
   logs, ``escalation capacity`` on the tau-bench score folder (docs/tutorials/reviewer-capacity.md);
5. a few cheap deterministic extras: ``plan`` (the examples of docs/tutorials/studies.md), ``policy init`` /
   ``policy check``, ``suite export``.

Every seed is fixed and every ``--n-jobs`` is 1; the environment is pinned (``PYTHONHASHSEED=0``, ``TZ=UTC``,
``COLUMNS=400``, no colour) so two records of one commit agree.

``compare`` compares two records file by file: the same set of files, each the same after normalising
what legitimately differs between two runs of the same code, and nothing else (found by recording one
commit twice and from two checkouts at other paths):

- JSON (``.json``, each line of ``.jsonl``, a ``--json`` print), by key, anywhere: ``started``,
  ``finished``, ``created`` (when), ``elapsed_seconds``, ``cells_seconds`` (wall times), ``version`` and
  ``escalation`` when they equal the recorded version, ``cell_function`` (the import path of a study's
  cell function in run-args.json: a module move changes it), and the SHA-256 / size of summary.json,
  report.html, PNG and PDF files recorded in another file (those files hold a time or a path, or are
  compared by pixels or presence; digests of conversations.jsonl are kept);
- every text: the repository's and the output folder's absolute paths, the conformance folder's path
  (relative and absolute), the recorded commit, ISO timestamps that fall within the recording (a timestamp
  outside it is data and stays), the recording's date, the version after "version" / "escalation", and
  in the reports the cells' run time ("Run time of the simulation cells 0.7 s", "cells computed in 1 s")
  and the summary.json digest quoted by compare's report.html;
- console output: also a study's closing "in 4.7 s" and a progress bar's clock, and line breaks (the
  commands print at a fixed width, so a longer output folder moves them: the words are compared);
- PNG files and PNG figures inside HTML by their pixels; PDF files by their presence; record.json by its
  commands and exit codes.

Every differing file is reported with a short unified diff of the normalised text; exit 1. Exit 0, with a
one-line summary, when all agree.

Standard library only. The interpreter given by ``--python`` must import ``escalation`` from ``--repo``
(an editable install of that checkout, e.g. in a virtualenv made with ``--system-site-packages``).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import difflib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

MANIFEST = "record.json"
FORMAT = 1

# --------------------------------------------------------------------------------------------- record

#: Seeds of the studies: their defaults at the time this guard was written, given explicitly so a
#: record does not depend on a default. A study not listed here gets the default its --help states.
STUDY_SEEDS = {"coverage": 20240501, "differences": 20261201, "sample-size": 20240606, "judges": 20240707,
               "capacity": 20261202}
REPRODUCE_SEED = 0
#: Policies of the example logs, by the folder under examples/data (README; tests/e2e/test_inputs.py scores
#: the inspect_ai logs with the tau-bench policy).
EXAMPLE_POLICIES = {"tau-bench": "examples/tau-bench-airline.policy.json",
                    "inspect": "examples/tau-bench-airline.policy.json"}
LOG_SUFFIXES = (".json", ".jsonl", ".ndjson", ".eval")
#: Simulated assistants on the same scenarios (as tests/metric/test_leaderboard.py): follows_policy is compared
#: with pressure_susceptible, the three are ranked by leaderboard.
SIM_PROFILES = ("follows_policy", "pressure_susceptible", "escalates_everything")
SIM_ARGS = ["--cases", "16", "--replicas", "3", "--rho", "0.1", "--seed", "1", "--n-jobs", "1"]
SKIP_DIRS = {".git", "build", "dist", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
             ".pytest_cache", ".ruff_cache"}


class Step:
    """One command: ``name`` (its subfolder), ``args`` after ``python -m escalation`` (``{out}``: the step's
    out/ folder; ``{OUT}``: the record's folder), the exit codes it may end with."""

    def __init__(self, name: str, args: list[str], ok=(0,), out: bool = True, why: str = ""):
        self.name, self.args, self.ok, self.out, self.why = name, args, tuple(ok), out, why


def _run(cmd, cwd, env, timeout=1800):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)


def pinned_env(repo: Path) -> dict:
    """The environment of every command: the same from run to run and from machine to machine."""
    env = dict(os.environ)
    for key in ("FORCE_COLOR", "CLICOLOR_FORCE", "PYTHONSTARTUP", "PYTHONINSPECT"):
        env.pop(key, None)
    env.update({"PYTHONHASHSEED": "0", "TZ": "UTC", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "COLUMNS": "400",
                "LINES": "50", "TERM": "dumb", "NO_COLOR": "1", "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"})
    return env


def check_interpreter(python: str, repo: Path, env: dict) -> dict:
    """The interpreter must import escalation (and its subpackages) from ``repo``; its version and paths."""
    probe = ("import json, sys, escalation, importlib\n"
             "files = {'escalation': escalation.__file__}\n"
             "for sub in ('estimators', 'simulate', 'studies', 'figures'):\n"
             "    try:\n"
             "        files[sub] = importlib.import_module('escalation.' + sub).__file__\n"
             "    except Exception as err:\n"
             "        files[sub] = 'error: %r' % (err,)\n"
             "print(json.dumps({'files': files, 'version': getattr(escalation, '__version__', None),\n"
             "                  'python': sys.version.split()[0], 'prefix': sys.prefix}))\n")
    done = _run([python, "-c", probe], repo, env, timeout=300)
    if done.returncode != 0:
        sys.exit(f"error: {python} cannot import escalation from {repo}:\n{done.stderr.strip()}")
    info = json.loads(done.stdout.strip().splitlines()[-1])
    real = os.path.realpath(repo)
    foreign = {k: v for k, v in info["files"].items()
               if not os.path.realpath(v).startswith(real + os.sep)}
    if foreign:
        sys.exit(f"error: {python} imports escalation from outside {repo}: {foreign}\n"
                 f"install this checkout in its own environment, e.g.\n"
                 f"  python -m venv --system-site-packages /tmp/venv && /tmp/venv/bin/pip install --no-deps -e {repo}\n"
                 f"and pass --python /tmp/venv/bin/python")
    return info


def conformance_sets(repo: Path, outdir: Path) -> tuple[Path | None, dict]:
    """The conformance folder (wherever the layout puts it) and ``{set: mode}``, the mode from its README."""
    found = []
    for root, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")
                         and os.path.realpath(os.path.join(root, d)) != os.path.realpath(outdir))
        if os.path.basename(root) == "conformance" and "README.md" in files:
            found.append(Path(root))
    found = [f for f in found if "tests" not in f.relative_to(repo).parts] or found
    if not found:
        return None, {}
    if len(found) > 1:
        sys.exit(f"error: more than one conformance folder in {repo}: {', '.join(map(str, found))}")
    folder = found[0]
    readme = (folder / "README.md").read_text()
    modes = dict(re.findall(r"^\|\s*`([\w.-]+)`\s*\|\s*(record|text)\s*\|", readme, re.MULTILINE))
    sets = {}
    for sub in sorted(p for p in folder.iterdir() if (p / "records.jsonl").is_file() and (p / "policy.json").is_file()):
        sets[sub.name] = modes.get(sub.name, "text" if "text" in sub.name else "record")
    return folder, sets


def listed_studies(python: str, repo: Path, env: dict) -> list[str]:
    """The study commands ``escalation study --help`` lists."""
    done = _run([python, "-m", "escalation", "study", "--help"], repo, env, timeout=300)
    text = done.stdout.split("Commands:", 1)[-1] if "Commands:" in done.stdout else ""
    names = re.findall(r"^\s{2}([a-z][\w-]*)\s", text, re.MULTILINE)
    if not names:
        sys.exit(f"error: escalation study --help lists no study:\n{done.stdout}{done.stderr}")
    return names


def study_seed(python: str, repo: Path, env: dict, name: str) -> list[str]:
    if name in STUDY_SEEDS:
        return ["--seed", str(STUDY_SEEDS[name])]
    done = _run([python, "-m", "escalation", "study", name, "--help"], repo, env, timeout=300)
    found = re.search(r"--seed\b.*?\[default:\s*(\d+)", " ".join(done.stdout.split()))
    return ["--seed", found.group(1)] if found else []


def build_steps(python: str, repo: Path, outdir: Path, env: dict) -> tuple[list[Step], dict]:
    steps: list[Step] = []
    paths: dict[str, str] = {}

    def add(name, args, **kw):
        steps.append(Step(name, [str(a) for a in args], **kw))

    def scored(name):
        return f"{{OUT}}/{name}/out"

    # 1. the paper's reproduction
    add("reproduce", ["reproduce", "--smoke", "--seed", REPRODUCE_SEED, "--n-jobs", "1", "--out", "{out}"])
    # 2. every study, smoke size
    for study in listed_studies(python, repo, env):
        add(f"study-{study}", ["study", study, "--smoke", *study_seed(python, repo, env, study), "--n-jobs", "1",
                               "--out", "{out}"])
    # 3a. the conformance set, as tests/metric/test_conformance.py scores it
    folder, sets = conformance_sets(repo, outdir)
    if folder is None:
        print("warning: no conformance folder found", file=sys.stderr)
    else:
        rel = folder.relative_to(repo).as_posix()
        paths["<CONFORMANCE>"] = rel
        for name, mode in sets.items():
            add(f"score-conformance-{name}", ["score", f"{rel}/{name}/records.jsonl", "--policy",
                                              f"{rel}/{name}/policy.json", "--mode", mode, "--seed", "0",
                                              "--out", "{out}"])
    # 3b. the example logs
    data = repo / "examples" / "data"
    labels = "{OUT}/_inputs/inspect-labels.csv"
    tau_scored = None
    for sub in sorted(p for p in data.iterdir() if p.is_dir()) if data.is_dir() else ():
        policy = EXAMPLE_POLICIES.get(sub.name)
        if policy is None:
            print(f"warning: no policy known for examples/data/{sub.name}: not scored", file=sys.stderr)
            continue
        logs = sorted(p for p in sub.iterdir() if p.is_file() and p.suffix in LOG_SUFFIXES)
        for log in logs:
            rel = log.relative_to(repo).as_posix()
            stem = f"{sub.name}-{log.stem}"
            if sub.name == "inspect":
                # no labels in these logs: exit 3, both files written (tests/e2e/test_inputs.py)
                add(f"score-example-{stem}", ["score", rel, "--policy", policy, "--seed", "0", "--out", "{out}"],
                    ok=(0, 3))
                add(f"score-example-{stem}-labelled", ["score", rel, "--policy", policy, "--labels", labels,
                                                        "--seed", "0", "--out", "{out}"])
            else:
                add(f"score-example-{stem}", ["score", rel, "--policy", policy, "--seed", "0", "--figures",
                                              "--out", "{out}"])
                add(f"score-example-{stem}-bootstrap-bca", ["score", rel, "--policy", policy, "--interval",
                                                            "bootstrap-bca", "--seed", "0", "--out", "{out}"])
                add(f"score-example-{stem}-text-mode", ["score", rel, "--policy", policy, "--mode", "text",
                                                        "--seed", "0", "--out", "{out}"])
                if sub.name == "tau-bench" and tau_scored is None:
                    tau_scored = (f"score-example-{stem}", log)
        if sub.name == "inspect" and logs:
            add("score-example-inspect-folder", ["score", sub.relative_to(repo).as_posix(), "--policy", policy,
                                                 "--seed", "0", "--out", "{out}"], ok=(0, 3))
    # 4. simulated assistants on the same scenarios, scored
    for profile in SIM_PROFILES:
        add(f"simulate-{profile}", ["simulate", "--profile", profile, *SIM_ARGS, "--out", "{out}"])
        add(f"score-simulated-{profile}", ["score", f"{{OUT}}/simulate-{profile}/out/records.jsonl", "--policy",
                                           f"{{OUT}}/simulate-{profile}/out/policy.json", "--seed", "0",
                                           "--out", "{out}"])
    # 4. compare two score folders
    a, b = SIM_PROFILES[:2]
    add("compare-simulated", ["compare", scored(f"score-simulated-{a}"), scored(f"score-simulated-{b}"),
                              "--names", f"{a},{b}", "--seed", "0", "--figures", "--out", "{out}"])
    add("compare-simulated-t-json", ["compare", scored(f"score-simulated-{a}"), scored(f"score-simulated-{b}"),
                                     "--names", f"{a},{b}", "--seed", "0", "--interval", "wilson-kish-t",
                                     "--json"], out=False)
    if tau_scored:
        name, log = tau_scored
        add("compare-example-tau-bench", ["compare", scored(name), scored(f"{name}-bootstrap-bca"),
                                          "--names", "wilson-kish,bootstrap-bca", "--seed", "0", "--out", "{out}"])
    # 4. leaderboards
    if tau_scored:
        rel = tau_scored[1].relative_to(repo).as_posix()
        add("leaderboard-example-tau-bench", ["leaderboard", rel, rel, "--name", "run-a", "--name", "run-b",
                                              "--policy", EXAMPLE_POLICIES["tau-bench"], "--seed", "0",
                                              "--out", "{out}"])
    inspect_logs = sorted(p for p in (data / "inspect").glob("*") if p.suffix in LOG_SUFFIXES)
    if len(inspect_logs) > 1:  # three tasks of no common scenario: refused, exit 2 (recorded as it is)
        add("leaderboard-example-inspect", ["leaderboard", *[p.relative_to(repo).as_posix() for p in inspect_logs],
                                            "--policy", EXAMPLE_POLICIES["inspect"], "--seed", "0", "--out", "{out}"],
            ok=(2,))
    names = []
    for profile in SIM_PROFILES:
        names += ["--name", profile]
    add("leaderboard-simulated", ["leaderboard", *[f"{{OUT}}/simulate-{p}/out/records.jsonl" for p in SIM_PROFILES],
                                  *names, "--policy", f"{{OUT}}/simulate-{SIM_PROFILES[0]}/out/policy.json",
                                  "--seed", "0", "--out", "{out}"])
    add("leaderboard-simulated-json", ["leaderboard", *[f"{{OUT}}/simulate-{p}/out/records.jsonl"
                                                        for p in SIM_PROFILES],
                                       *names, "--policy", f"{{OUT}}/simulate-{SIM_PROFILES[0]}/out/policy.json",
                                       "--seed", "0", "--json", "--out", "{out}"])
    # 4. capacity (README, docs/capacity.md)
    if tau_scored:
        folder_ = scored(tau_scored[0])
        base = ["capacity", folder_, "--traffic", "200", "--esc-share", "0.1", "--review-minutes", "4", "--seed", "0"]
        add("capacity-tau-bench-3-reviewers", [*base, "--reviewers", "3"], out=False)
        add("capacity-tau-bench-5-reviewers", [*base, "--reviewers", "5"], out=False)
        add("capacity-tau-bench-5-reviewers-json", [*base, "--reviewers", "5", "--json"], out=False)
        add("capacity-tau-bench-solve-reviewers", [*base, "--solve", "reviewers", "--target-wait", "2"], out=False)
        add("capacity-tau-bench-solve-budget", [*base, "--solve", "budget", "--reviewers", "3"], out=False)
        add("capacity-tau-bench-bursty", [*base, "--reviewers", "5", "--arrival-cv", "2", "--service-cv", "0.5",
                                          "--json"], out=False)
    add("capacity-simulated", ["capacity", scored(f"score-simulated-{SIM_PROFILES[0]}"), "--traffic", "60",
                               "--esc-share", "0.1", "--review-minutes", "4", "--reviewers", "2", "--seed", "0",
                               "--json"], out=False)
    # 5. extras: cheap and deterministic
    add("plan-interval", ["plan", "--p", "0.1", "--half-width", "0.05", "--rho", "0.1", "--replicas", "10"], out=False)
    add("plan-size-cv", ["plan", "--p", "0.1", "--half-width", "0.05", "--rho", "0.1", "--replicas", "10",
                         "--size-cv", "0.5"], out=False)
    add("plan-power", ["plan", "--p", "0.1", "--p-b", "0.2", "--power", "0.8", "--rho", "0.05", "--replicas", "10"],
        out=False)
    if tau_scored:
        rel = tau_scored[1].relative_to(repo).as_posix()
        add("policy-init-tau-bench", ["policy", "init", rel, "--out", "{out}/airline.toml"])
        add("policy-check-tau-bench", ["policy", "check", rel, "--policy", EXAMPLE_POLICIES["tau-bench"]],
            ok=(0, 1), out=False)
    add("suite-export", ["suite", "export", "--out", "{out}"])
    add("suite-list", ["suite", "list"], out=False)
    return steps, paths


def record(args) -> int:
    python = args.python
    repo = Path(args.repo).resolve() if args.repo else Path(__file__).resolve().parent.parent
    outdir = Path(args.outdir).resolve()
    if outdir.exists() and any(outdir.iterdir()):
        if not args.force:
            sys.exit(f"error: {outdir} is not empty (add --force to replace it)")
        shutil.rmtree(outdir)
    env = pinned_env(repo)
    info = check_interpreter(python, repo, env)
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "_inputs").mkdir()
    (outdir / "_inputs" / "inspect-labels.csv").write_text("case_id,label\n1,ESC\n")
    steps, paths = build_steps(python, repo, outdir, env)
    if args.only:
        steps = [s for s in steps if re.search(args.only, s.name)]
    commit = _run(["git", "rev-parse", "HEAD"], repo, env).stdout.strip() or None
    dirty = bool(_run(["git", "status", "--porcelain", "--untracked-files=no"], repo, env).stdout.strip())
    started = time.time()
    manifest = {"format": FORMAT, "repo": str(repo), "repo_realpath": os.path.realpath(repo), "out": str(outdir),
                "out_realpath": os.path.realpath(outdir), "python": python, "prefix": info["prefix"],
                "python_version": info["python"], "version": info["version"], "commit": commit, "dirty": dirty,
                "imports": info["files"], "paths": paths,
                "started": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"), "steps": []}
    failures = 0
    for i, step in enumerate(steps, 1):
        folder = outdir / step.name
        folder.mkdir()
        out = folder / "out"
        argv = [a.replace("{out}", str(out)).replace("{OUT}", str(outdir)) for a in step.args]
        t0 = time.time()
        try:
            done = _run([python, "-m", "escalation", *argv], repo, env, timeout=args.timeout)
            code, stdout, stderr = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as err:
            code, stdout, stderr = "timeout", err.stdout or "", err.stderr or ""
            stdout = stdout.decode() if isinstance(stdout, bytes) else stdout
            stderr = stderr.decode() if isinstance(stderr, bytes) else stderr
        seconds = round(time.time() - t0, 2)
        (folder / "stdout.txt").write_text(stdout)
        (folder / "stderr.txt").write_text(stderr)
        (folder / "command.json").write_text(json.dumps({"args": ["escalation", *step.args], "exit_code": code},
                                                        indent=2) + "\n")
        ok = code in step.ok
        failures += not ok
        manifest["steps"].append({"name": step.name, "args": ["escalation", *step.args], "exit_code": code,
                                  "expected_exit": list(step.ok), "elapsed_seconds": seconds})
        print(f"[{i:2d}/{len(steps)}] {step.name}: exit {code} in {seconds:.1f} s"
              + ("" if ok else f"  <-- expected {' or '.join(map(str, step.ok))}"
                 f"\n{stderr.strip()[-2000:]}"), flush=True)
    manifest["finished"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    manifest["elapsed_seconds"] = round(time.time() - started, 1)
    (outdir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"recorded {len(steps)} commands into {outdir} in {manifest['elapsed_seconds']:.0f} s"
          f" ({failures} with an unexpected exit code)")
    return 1 if failures else 0


# --------------------------------------------------------------------------------------------- compare

#: JSON keys whose value says when or how long a run took, anywhere in a JSON file: ``started``,
#: ``finished`` (run.json), ``created`` (summary.json, compare.json: ``provenance.created``),
#: ``elapsed_seconds`` (run.json: the run's wall time), ``cells_seconds`` (run.json: the cells' wall time).
TIME_KEYS = {"elapsed_seconds", "cells_seconds", "started", "finished", "created"}
#: JSON keys of provenance: where and by what a file was computed, never what was computed.
#: ``cell_function`` (run-args.json) is the import path of a study's cell function
#: (``escalation.studies._reproduce.run_cell``): where the code lives, which a move of modules changes.
#: The others do not occur in today's outputs; they are here should a run start recording them.
PROVENANCE_KEYS = {"cell_function", "commit", "git_commit", "hostname", "python_version", "platform"}
#: JSON keys whose value is the package's version (normalised only when it equals the recorded version):
#: ``version`` (run.json, run-args.json), ``escalation`` (``provenance.escalation`` of summary.json).
VERSION_KEYS = {"version", "escalation"}
#: Digests (SHA-256, size) that a file records of another output file which is itself compared after
#: normalisation, so its digest moves with a time or a path inside it: summary.json (``provenance.created``)
#: and report.html (the time, the output folder) in ``provenance.outputs`` of summary.json and in
#: compare.json's ``provenance.folders[].sha256``; PNG and PDF figures, compared by pixels and presence.
#: Digests of other files (conversations.jsonl, judges.jsonl) are kept: they must not move.
DIGESTED_ELSEWHERE = re.compile(r"(^summary\.json$|\.html?$|\.png$|\.pdf$)")

ISO_TS = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2}| ?UTC)?")
#: Wall times written in prose, in the reports (report.md, report.html) of reproduce and the studies:
#: "Run time of the simulation cells 0.7 s (`cells_seconds` in `run.json`" (reproduce), "cells computed
#: in 1 s (run.json: `cells_seconds`" (studies); and the digest of a score folder's summary.json quoted
#: in compare's report.html ("summary.json SHA-256 54b79fcd17cc5e38...": summary.json holds its time).
TEXT_TIMES = [
    (re.compile(r"(Run time of the simulation cells |cells computed in )\d+(?:\.\d+)?( s\b)"), r"\1<SECONDS>\2"),
    (re.compile(r"\b\d+(?:\.\d+)?( s \((?:run\.json: )?`cells_seconds`)"), r"<SECONDS>\1"),
    (re.compile(r"(summary\.json SHA-256 )[0-9a-f]{8,64}"), r"\1<DIGEST>"),
]
#: On the console only: a study's closing line ("16 cells in 4.7 s ->", "capacity study in 3.2 s (R=1",
#: "13 plans and tests simulated in 5.1 s"), and a progress bar's elapsed and remaining time
#: (rich: "24/24 0:00:01 0:00:00").
CONSOLE_SECONDS = re.compile(r"(\bin )\d+(?:\.\d+)?( s\b)")
#: A progress bar's elapsed and remaining time (rich: "24/24 0:00:01 0:00:00"), on the console only.
CLOCK = re.compile(r"(?<![\d:])(?:\d+|-):[\d-]{2}:[\d-]{2}(?![\d:])")


def _parse_ts(text: str) -> _dt.datetime:
    """An ISO timestamp as an aware datetime (no zone: UTC, as the records pin ``TZ=UTC``)."""
    text = text.strip().replace(" UTC", "Z").replace(" ", "T")
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    when = _dt.datetime.fromisoformat(text)
    return when if when.tzinfo else when.replace(tzinfo=_dt.UTC)


class Tree:
    """One record: its folder and what normalises its files."""

    def __init__(self, root: Path):
        self.root = root
        path = root / MANIFEST
        self.manifest = json.loads(path.read_text()) if path.is_file() else {}
        m = self.manifest
        subs = []
        for key, placeholder in (("out", "<OUT>"), ("out_realpath", "<OUT>"), ("repo", "<REPO>"),
                                 ("repo_realpath", "<REPO>"), ("prefix", "<PREFIX>")):
            if m.get(key):
                subs.append((m[key], placeholder))
        if not m.get("out"):
            subs.append((str(root.resolve()), "<OUT>"))
        for placeholder, rel in (m.get("paths") or {}).items():
            if m.get("repo"):
                subs.append((f"{m['repo']}/{rel}", placeholder))
            subs.append((rel, placeholder))
        if m.get("python"):
            subs.append((m["python"], "<PYTHON>"))
        # longest first, so the repository inside the output folder's path (or the reverse) goes whole
        self.subs = sorted({s for s in subs if s[0]}, key=lambda s: -len(s[0]))
        self.version = m.get("version")
        self.dates = sorted({m[k][:10] for k in ("started", "finished") if m.get(k)})
        # the time window of the recording: a timestamp in it is when a file was written, one outside
        # it is data (the suite's backend dates, a log's own times) and stays
        self.window = None
        if m.get("started") and m.get("finished"):
            slack = _dt.timedelta(minutes=5)
            self.window = (_parse_ts(m["started"]) - slack, _parse_ts(m["finished"]) + slack)
        self.commit = m.get("commit")

    # -- text
    def paths(self, s: str) -> str:
        for old, new in self.subs:
            s = s.replace(old, new)
        return s

    def text(self, s: str) -> str:
        s = self.paths(s)
        if self.commit:
            s = s.replace(self.commit, "<COMMIT>").replace(self.commit[:12], "<COMMIT>")
        s = ISO_TS.sub(self._timestamp, s)
        for date in self.dates:  # the day of the recording, wherever a run writes it alone
            s = s.replace(date, "<DATE>")
        for pattern, repl in TEXT_TIMES:
            s = pattern.sub(repl, s)
        if self.version:
            v = re.escape(self.version)
            s = re.sub(r"(?i)(\bversion[\s:=`\"']*|\bescalation[\s=`\"']*v?|\bescalation/)" + v + r"\b",
                       r"\1<VERSION>", s)
        return s

    def _timestamp(self, match) -> str:
        if self.window is None:
            return "<TIMESTAMP>"
        try:
            when = _parse_ts(match.group(0))
        except ValueError:
            return match.group(0)
        return "<TIMESTAMP>" if self.window[0] <= when <= self.window[1] else match.group(0)

    # -- json
    def value(self, obj, key=None):
        if key in TIME_KEYS and obj is not None:
            return "<TIME>"
        if key in PROVENANCE_KEYS and obj is not None:
            return "<PROVENANCE>"
        if key in VERSION_KEYS and isinstance(obj, str) and obj == self.version:
            return "<VERSION>"
        if key is not None and DIGESTED_ELSEWHERE.search(key):
            if isinstance(obj, str) and re.fullmatch(r"[0-9a-f]{32,128}", obj):
                return "<DIGEST>"
            if isinstance(obj, dict) and set(obj) <= {"bytes", "sha256", "size"}:
                return {k: "<DIGEST>" for k in obj}
        if isinstance(obj, dict):
            return {k: self.value(v, k) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.value(v) for v in obj]
        if isinstance(obj, str):
            return self.text(obj)
        return obj


def _json_text(tree: Tree, raw: str, manifest: bool = False) -> str:
    data = json.loads(raw)
    if manifest:
        # the record's bookkeeping: the commands and their exit codes are compared, the rest is provenance
        data = {"format": data.get("format"),
                "steps": [{k: v for k, v in s.items() if k != "elapsed_seconds"} for s in data.get("steps", [])]}
    return json.dumps(tree.value(data), indent=1, sort_keys=True, ensure_ascii=False)


def _jsonl_text(tree: Tree, raw: str) -> str:
    lines = []
    for line in raw.splitlines():
        try:
            lines.append(json.dumps(tree.value(json.loads(line)), sort_keys=True, ensure_ascii=False))
        except ValueError:
            lines.append(tree.text(line))
    return "\n".join(lines)


def png_pixels(data: bytes) -> tuple:
    """``(IHDR, PLTE, tRNS, raw scanlines)`` of a PNG: its image, without its text or time chunks."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, chunks, idat = 8, {}, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IDAT":
            idat.append(body)
        elif kind in (b"IHDR", b"PLTE", b"tRNS"):
            chunks[kind] = body
        if kind == b"IEND":
            break
    return chunks.get(b"IHDR"), chunks.get(b"PLTE"), chunks.get(b"tRNS"), zlib.decompress(b"".join(idat))


def _unfilter(ihdr: bytes, raw: bytes) -> bytes:
    """The pixels of a non-interlaced PNG's scanlines (filters undone), to compare two encodings."""
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", ihdr)
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
    bpp = max(1, channels * depth // 8)
    stride = (width * channels * depth + 7) // 8
    if interlace:
        return raw
    out, prev, pos = bytearray(), bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out += line
        prev = line
    return bytes(out)


def same_png(a: bytes, b: bytes) -> bool:
    if a == b:
        return True
    pa, pb = png_pixels(a), png_pixels(b)
    if pa[:3] != pb[:3]:
        return False
    return pa[3] == pb[3] or _unfilter(pa[0], pa[3]) == _unfilter(pb[0], pb[3])


def _same_png_or_bytes(a: bytes, b: bytes) -> bool:
    try:
        return same_png(a, b)
    except (ValueError, KeyError, IndexError, struct.error, zlib.error):
        return a == b


DATA_URI = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")


def _html_text(tree: Tree, raw: str) -> tuple[str, list[bytes]]:
    """An HTML page: its text, each embedded PNG figure replaced by its number, and the figures (compared
    by their pixels, as the PNG files are)."""
    import base64

    figures: list[bytes] = []

    def take(match):
        figures.append(base64.b64decode(match.group(1)))
        return f"data:image/png;base64,<PNG #{len(figures)}>"

    return tree.text(DATA_URI.sub(take, raw)), figures


def _console_text(tree: Tree, raw: str) -> str:
    return CONSOLE_SECONDS.sub(r"\1<SECONDS>\2", CLOCK.sub("<CLOCK>", tree.text(raw)))


def _console_squashed(tree: Tree, raw: str) -> str:
    """What a console text says, whatever its line breaks: the commands print at a fixed width (score 100,
    compare 100, leaderboard 160, policy 80), so a longer or shorter output folder in a printed path moves
    the breaks of the lines after it (or folds the path itself). Whitespace is dropped after the times are
    normalised on the text with its breaks joined, and the paths are replaced again once it is dropped."""
    return tree.paths(re.sub(r"\s+", "", _console_text(tree, re.sub(r"\s+", " ", raw))))


def normalised(tree: Tree, rel: str) -> tuple[str, Any]:
    """``(kind, value)`` of one file: kind ``text`` (normalised text), ``png``/``bytes`` (raw bytes),
    ``exists`` (PDF: only its presence)."""
    path = tree.root / rel
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return "exists", None
    data = path.read_bytes()
    if suffix == ".png":
        return "png", data
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError:
        return "bytes", data
    if rel == MANIFEST:
        return "text", _json_text(tree, raw, manifest=True)
    if suffix == ".json":
        try:
            return "text", _json_text(tree, raw)
        except ValueError:
            return "text", tree.text(raw)
    if suffix in (".jsonl", ".ndjson"):
        return "text", _jsonl_text(tree, raw)
    if suffix in (".html", ".htm"):
        return "html", _html_text(tree, raw)
    if path.name in ("stdout.txt", "stderr.txt"):
        if raw.lstrip()[:1] in ("{", "["):  # --json: one JSON document, normalised by its keys
            try:
                return "text", _json_text(tree, raw)
            except ValueError:
                pass
        return "console", (_console_text(tree, raw), _console_squashed(tree, raw))
    return "text", tree.text(raw)


def _shorten(diff: list[str], width: int) -> list[str]:
    """Diff lines of at most ``width`` characters: a longer changed line (a minified page, a JSON line) is
    shown around the first character where it differs from the line it replaces."""
    removed = [line for line in diff if line.startswith("-") and not line.startswith("---")]
    added = [line for line in diff if line.startswith("+") and not line.startswith("+++")]
    first = {}
    for a, b in zip(removed, added):
        i = next((k for k, (x, y) in enumerate(zip(a[1:], b[1:])) if x != y), min(len(a), len(b)) - 1)
        first[id(a)] = first[id(b)] = i
    out = []
    for line in diff:
        if len(line) <= width:
            out.append(line)
            continue
        at = first.get(id(line), 0)
        start = max(0, at - width // 2)
        out.append(line[0] + ("..." if start else "") + line[1 + start:1 + start + width] + " ...")
    return out


def files_of(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def compare(args) -> int:
    before, after = Tree(Path(args.before)), Tree(Path(args.after))
    for tree in (before, after):
        if not tree.root.is_dir():
            sys.exit(f"error: {tree.root} is not a folder")
        if not tree.manifest:
            print(f"warning: {tree.root} has no {MANIFEST}: paths are not normalised", file=sys.stderr)
    fa, fb = files_of(before.root), files_of(after.root)
    problems: list[tuple[str, str, list[str] | None]] = []
    for rel in sorted(fa - fb):
        problems.append((rel, "only in BEFORE", None))
    for rel in sorted(fb - fa):
        problems.append((rel, "only in AFTER", None))
    common = sorted(fa & fb)
    for rel in common:
        ka, va = normalised(before, rel)
        kb, vb = normalised(after, rel)
        if ka != kb:
            problems.append((rel, f"a {ka} file in BEFORE, a {kb} file in AFTER", None))
        elif ka == "exists":
            continue
        elif ka == "png":
            try:
                if not same_png(va, vb):
                    problems.append((rel, "the PNG's pixels differ", None))
            except (ValueError, KeyError, IndexError, struct.error, zlib.error) as err:  # not a PNG: its bytes
                if va != vb:
                    problems.append((rel, f"bytes differ ({err})", None))
        elif ka == "html":
            if va[0] != vb[0]:
                diff = list(difflib.unified_diff(va[0].splitlines(), vb[0].splitlines(), f"BEFORE/{rel}",
                                                 f"AFTER/{rel}", n=args.context, lineterm=""))
                problems.append((rel, "differs after normalisation", diff))
            else:
                bad = [i for i, (x, y) in enumerate(zip(va[1], vb[1]), 1) if not _same_png_or_bytes(x, y)]
                if bad:
                    problems.append((rel, f"the pixels of its embedded PNG figure(s) #{bad} differ", None))
        elif ka == "console":
            if va[1] != vb[1]:  # the same words whatever the line breaks are the same output
                diff = list(difflib.unified_diff(va[0].splitlines(), vb[0].splitlines(), f"BEFORE/{rel}",
                                                 f"AFTER/{rel}", n=args.context, lineterm=""))
                problems.append((rel, "differs after normalisation", diff))
        elif ka == "bytes":
            if va != vb:
                problems.append((rel, f"bytes differ ({len(va)} and {len(vb)} bytes)", None))
        elif va != vb:
            diff = list(difflib.unified_diff(va.splitlines(), vb.splitlines(), f"BEFORE/{rel}", f"AFTER/{rel}",
                                             n=args.context, lineterm=""))
            problems.append((rel, "differs after normalisation", diff))
    for rel, why, lines in problems:
        print(f"DIFFERS {rel}: {why}")
        if lines is not None and not lines:
            lines = ["(the same lines; the words differ once line breaks are dropped)"]
        if lines:
            shown = _shorten(lines, args.width)
            for line in shown[:args.max_lines]:
                print(f"    {line}")
            if len(shown) > args.max_lines:
                print(f"    ... ({len(shown) - args.max_lines} more diff lines)")
    steps = len(before.manifest.get("steps", []))
    if problems:
        print(f"FAIL: {len(problems)} of {len(fa | fb)} files differ between {before.root} and {after.root}")
        return 1
    pdfs = sum(1 for rel in common if rel.lower().endswith(".pdf"))
    print(f"OK: {len(common)} files of {steps} commands agree between {before.root} and {after.root} "
          f"(normalised; {pdfs} PDF compared by presence, PNG by pixels)")
    return 0


# --------------------------------------------------------------------------------------------- main

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run the commands into OUTDIR")
    rec.add_argument("outdir", metavar="OUTDIR")
    rec.add_argument("--repo", metavar="PATH", help="repository to run from (default: the one holding this script)")
    rec.add_argument("--python", metavar="PATH", default=sys.executable,
                     help="interpreter that imports escalation from --repo (default: this one)")
    rec.add_argument("--force", action="store_true", help="replace a non-empty OUTDIR")
    rec.add_argument("--only", metavar="REGEX", help="record only the steps whose name matches (for debugging)")
    rec.add_argument("--timeout", type=int, default=1800, metavar="S", help="seconds a command may take")
    cmp_ = sub.add_parser("compare", help="compare two records; exit 1 when a file differs")
    cmp_.add_argument("before", metavar="BEFORE")
    cmp_.add_argument("after", metavar="AFTER")
    cmp_.add_argument("--context", type=int, default=1, help="context lines of each diff")
    cmp_.add_argument("--max-lines", type=int, default=40, help="diff lines shown per file")
    cmp_.add_argument("--width", type=int, default=240, help="characters shown per diff line")
    args = parser.parse_args(argv)
    return record(args) if args.command == "record" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
