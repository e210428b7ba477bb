"""Helpers for the end-to-end tests: they run the real `cella` binary (path in
$CELLA_BIN), which creates real sandboxes. They need root (cgroups, uid ranges)."""
import os
import re
import subprocess
import tempfile

import pytest

CELLA = os.environ.get("CELLA_BIN", os.path.join(os.path.dirname(__file__), "../../build/cella"))
# Generous bound on any one run: a test never asserts on speed, but a hang
# must end the test, not the CI job.
HANG_LIMIT = 120


@pytest.fixture(scope="session")
def state_dir():
    with tempfile.TemporaryDirectory(prefix="cella-e2e-") as d:
        yield d


@pytest.fixture(scope="session", autouse=True)
def needs_root():
    if os.geteuid() != 0:
        pytest.fail("the end-to-end tests need root (cgroups, uid ranges); run them as root")


def box(state_dir, *args, input=None, env=None, timeout=HANG_LIMIT, check=None):
    """Runs `cella box ARGS...` and returns the CompletedProcess (bytes)."""
    full_env = dict(os.environ)
    full_env["CELLA_STATE_DIR"] = state_dir
    if env:
        full_env.update(env)
    cmd = [CELLA, "box", *args]
    p = subprocess.run(cmd, input=input, capture_output=True, env=full_env, timeout=timeout,
                       stdin=None if input is not None else subprocess.DEVNULL)
    if check is not None and p.returncode != check:
        raise AssertionError(f"{cmd} exited {p.returncode}, wanted {check}\n"
                             f"stdout: {p.stdout[-2000:]!r}\nstderr: {p.stderr[-2000:]!r}")
    return p


def cella_cgroups():
    """Every cgroup directory cella made for a sandbox, on any hierarchy."""
    found = []
    for root, dirs, _ in os.walk("/sys/fs/cgroup"):
        if os.path.basename(root) == "cella":
            found += [os.path.join(root, d) for d in dirs]
            dirs[:] = []
    return found


def host_processes_matching(pattern):
    rx = re.compile(pattern)
    hits = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if rx.search(cmd):
            hits.append((int(pid), cmd))
    return hits
