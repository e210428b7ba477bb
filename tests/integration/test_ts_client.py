"""The TypeScript client and the Flue driver (clients/typescript) against a
live daemon. The package is installed with `npm ci` from its lockfile when
node_modules is missing or older than the lockfile (the Node 22 that
@flue/runtime needs comes from npm too, as the devDependency `node`), built
with tsc (which typechecks the driver against the real @flue/runtime), and
its own node:test suites run against a `cella serve` with a tokens file:
test/client.test.ts (every client method, errors, streaming, aborts) and
test/flue.test.ts (the driver through real Sandboxes from sandboxFromDriver)."""
import os
import shutil
import subprocess

import pytest

from daemon import Daemon, tokens_file

PKG = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../clients/typescript"))
NODE = os.path.join(PKG, "node_modules", ".bin", "node")
TOKEN = "tok-ts-client-0123456789abcdef"
OTHER = "tok-ts-other-0123456789abcdefg"


def _npm_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("CELLA_")}
    env.update(npm_config_audit="false", npm_config_fund="false",
               npm_config_update_notifier="false")
    return env


def _run(cmd, timeout, env=None):
    p = subprocess.run(cmd, cwd=PKG, env=env or _npm_env(), capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=timeout)
    assert p.returncode == 0, (f"{' '.join(cmd)} exited {p.returncode}\n"
                               f"stdout:\n{p.stdout[-6000:]}\nstderr:\n{p.stderr[-6000:]}")
    return p


def _stale():
    """node_modules is missing, or npm installed it from an older lockfile."""
    marker = os.path.join(PKG, "node_modules", ".package-lock.json")
    if not os.path.exists(NODE) or not os.path.exists(marker):
        return True
    return os.path.getmtime(os.path.join(PKG, "package-lock.json")) > os.path.getmtime(marker)


@pytest.fixture(scope="module")
def built():
    npm = shutil.which("npm")
    assert npm, "npm is missing: run 'make deps' (scripts/deps.sh installs nodejs and npm)"
    if _stale():
        _run([npm, "ci"], timeout=900)
    v = _run([NODE, "--version"], timeout=60).stdout.strip()
    major, minor = (int(x) for x in v.lstrip("v").split(".")[:2])
    assert (major, minor) >= (22, 19), f"node_modules/.bin/node is {v}; @flue/runtime needs 22.19+"
    _run([npm, "run", "build"], timeout=600)
    return NODE


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    tokens = tokens_file(tmp_path_factory.mktemp("tsclient"), {TOKEN: "alice", OTHER: "bob"})
    daemon = Daemon(tokens=tokens).start()
    yield daemon
    daemon.close()


@pytest.mark.parametrize("suite", ["client", "flue"])
def test_node_suite(built, d, suite):
    env = _npm_env()
    env.update(CELLA_URL=d.url, CELLA_TOKEN=TOKEN, CELLA_OTHER_TOKEN=OTHER)
    p = subprocess.run([built, "--test", "--test-reporter=tap", f"test-build/test/{suite}.test.js"],
                       cwd=PKG, env=env, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=600)
    out = p.stdout + p.stderr
    assert p.returncode == 0, f"the {suite} suite failed:\n{out[-20000:]}"
    counts = dict(line[2:].split(" ", 1) for line in p.stdout.splitlines()
                  if line.startswith("# ") and len(line[2:].split(" ", 1)) == 2)
    assert int(counts.get("pass", 0)) > 0 and counts.get("fail") == "0", out[-20000:]
    # Nothing may be skipped in silence (a test skips without CELLA_OTHER_TOKEN).
    assert counts.get("skipped") == "0" and counts.get("todo", "0") == "0", out[-20000:]


def test_every_sandbox_was_stopped(built, d):
    """The suites stop what they made (the driver's own sandboxes by stopAll)."""
    st, body = d.get("/v1/sandboxes", token=TOKEN)
    assert st == 200 and body["sandboxes"] == [], body
