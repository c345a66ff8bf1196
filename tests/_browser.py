"""Debian's headless Chromium for the tests that open pages in a real browser: installed once when missing and
this user may (root, apt-get); else the tests are skipped and say why."""
from __future__ import annotations

__all__ = ["ARGS", "CHROMIUM", "install_chromium"]

import os
import shutil
import subprocess
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
INSTALL_TIMEOUT = 900  # seconds: apt-get on a slow mirror


def install_chromium() -> str | None:
    """Install Debian's chromium when missing; None when it is there, else why it cannot be."""
    if CHROMIUM.exists():
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return f"{CHROMIUM} is missing and this user cannot install it (apt-get install -y chromium needs root)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        for command in (["apt-get", "install", "-y", "chromium"], ["apt-get", "update"],  # lists missing: update
                        ["apt-get", "install", "-y", "chromium"]):
            done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, env=env)
            if CHROMIUM.exists():
                return None
    except subprocess.TimeoutExpired:
        return f"{' '.join(command)} took more than {INSTALL_TIMEOUT} s"
    last = (done.stderr or done.stdout).strip().splitlines()
    return f"apt-get install -y chromium did not install {CHROMIUM}: {last[-1] if last else 'no output'}"
