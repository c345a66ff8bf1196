"""Start-up of the command line against the bare interpreter (issue 18).

Usage: python benchmarks/startup.py [--rounds 15] [--no-bytecode-cache]

Each round runs, each in a fresh process, the bare interpreter (``sys.executable -c pass``) and
every command below once, in an order rotated from round to round (a change of the machine's
load falls on all of them alike); the medians over the rounds ignore the odd slow run. For each
it prints the median and the fastest wall time, the ratio of the median to the bare interpreter's,
the median peak resident memory (``ru_maxrss`` of the child, from ``os.wait4``), and then the
modules each command imports (one more run, under a wrapper that lists ``sys.modules``).

- ``--help``: ``sys.executable -m escalation --help``; target at most 10 times the interpreter;
- ``--help (script)``: the same through the installed ``escalation`` console script beside
  ``sys.executable``, when there is one;
- ``score --help``;
- ``score``: ``escalation score`` on the 200-run tau-bench example
  (``examples/data/tau-bench/gpt-4o-airline.json``, its policy ``examples/tau-bench-airline.policy.json``)
  with ``--out`` a new folder each run; target at most 25 times the interpreter.

Every child is ``sys.executable`` itself, never a ``python`` found on the PATH (pyenv's shim is a
shell script that takes longer than the interpreter). With ``PYTHONDONTWRITEBYTECODE`` set, every
run would compile the project's sources again, which an installed package never does; so the
children keep their bytecode in a temporary ``PYTHONPYCACHEPREFIX``, filled by one untimed run of
each command first. ``--no-bytecode-cache`` runs them in the environment as it is.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "examples" / "data" / "tau-bench" / "gpt-4o-airline.json"
POLICY = ROOT / "examples" / "tau-bench-airline.policy.json"
#: The targets of issue 18: median time at most this many times the bare interpreter's.
TARGETS = {"--help": 10, "--help (script)": 10, "score": 25}
HEAVY = ("numpy", "pandas", "scipy", "matplotlib", "pyarrow", "jinja2", "joblib", "dask", "inspect_ai", "rich",
         "pydantic")

# Runs ``escalation ARGS`` as the command line does, then lists the modules it imported on stderr.
_LIST_MODULES = """
import sys
sys.argv = ["escalation", *sys.argv[1:]]
from escalation.cli import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules)) + "\\n")
"""


def console_script() -> str | None:
    """The installed ``escalation`` script of this interpreter's environment, if any."""
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        found = shutil.which("escalation", path=folder)
        if found:
            return found
    return None


def run(argv: list[str], env: dict) -> tuple[float, float]:
    """Wall time (s) and peak resident memory (MB) of one run of ``argv``; its output is discarded."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    _, status, usage = os.wait4(child.pid, 0)  # this child's own rusage, not every child's maximum
    elapsed = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    error = child.stderr.read().decode(errors="replace")
    child.stderr.close()
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {child.returncode}:\n{error}")
    return elapsed, usage.ru_maxrss / 1024  # ru_maxrss is in KB on Linux


def imported(argv_tail: list[str], env: dict) -> list[str]:
    """The modules ``escalation ARGS`` imports (one untimed run under a wrapper)."""
    done = subprocess.run([sys.executable, "-c", _LIST_MODULES, *argv_tail], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=True)
    return done.stderr.rsplit("MODULES ", 1)[1].split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="Runs of each command (default 15).")
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="Run the children in this environment as it is (PYTHONDONTWRITEBYTECODE included).")
    args = parser.parse_args()
    for path in (LOG, POLICY):
        if not path.exists():
            raise SystemExit(f"missing {path}: the tau-bench example of examples/")

    with tempfile.TemporaryDirectory(prefix="escalation-startup-") as tmp:
        env = dict(os.environ)
        if not args.no_bytecode_cache:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        outs = iter(range(10**9))

        def score_argv(prefix):
            return [*prefix, "score", str(LOG), "--policy", str(POLICY), "--out", str(Path(tmp) / f"out-{next(outs)}")]

        module = [sys.executable, "-m", "escalation"]
        commands = {"bare interpreter": lambda: [sys.executable, "-c", "pass"],
                    "--help": lambda: [*module, "--help"]}
        script = console_script()
        if script:
            commands["--help (script)"] = lambda: [script, "--help"]
        commands["score --help"] = lambda: [*module, "score", "--help"]
        commands["score"] = lambda: score_argv(module)

        for make in commands.values():  # untimed: fills the bytecode cache
            run(make(), env)
        times = {name: [] for name in commands}
        peaks = {name: [] for name in commands}
        names = list(commands)
        load_before = os.getloadavg()
        for round_ in range(args.rounds):
            for name in names[round_ % len(names):] + names[:round_ % len(names)]:
                elapsed, peak = run(commands[name](), env)
                times[name].append(elapsed)
                peaks[name].append(peak)
        load_after = os.getloadavg()

        bare = statistics.median(times["bare interpreter"])
        print(f"python {sys.version.split()[0]} ({sys.executable}), {os.cpu_count()} cores, {args.rounds} rounds; "
              f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; bytecode "
              f"{'as the environment has it' if args.no_bytecode_cache else 'cached (PYTHONPYCACHEPREFIX)'}")
        if script:
            print(f"console script: {script}")
        print(f"\n{'command':<18} {'median':>9} {'fastest':>9} {'ratio':>7} {'target':>7} {'peak MB':>8}")
        for name in names:
            median = statistics.median(times[name])
            ratio = median / bare
            target = TARGETS.get(name)
            verdict = "" if target is None else f"<= {target}x {'met' if ratio <= target else 'NOT met'}"
            print(f"{name:<18} {median * 1000:>6.0f} ms {min(times[name]) * 1000:>6.0f} ms {ratio:>6.1f}x "
                  f"{verdict:>13} {statistics.median(peaks[name]):>6.0f}")

        print("\nmodules imported (heavy: " + ", ".join(HEAVY) + ")")
        for name, tail in (("--help", ["--help"]), ("score --help", ["score", "--help"]),
                           ("score", score_argv([]))):
            modules = imported(tail, env)
            heavy = sorted({m.split(".")[0] for m in modules} & set(HEAVY))
            print(f"{name:<18} {len(modules):>5} modules; heavy: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()
