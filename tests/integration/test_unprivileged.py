"""cella run by an unprivileged user: a single uid/gid mapping (the caller's
own ids shown as 1000), everything else the same. Runs as `nobody` with a
delegated cgroup v1 subtree, as a hybrid host allows."""
import os
import pwd
import shutil
import subprocess
import uuid

import pytest

from conftest import CELLA, HANG_LIMIT

PROBE = os.environ.get("CELLA_PROBE",
                       os.path.join(os.path.dirname(__file__), "../../build/tests/probe/cella-probe"))
V1 = os.path.exists("/sys/fs/cgroup/memory/cgroup.procs")


@pytest.fixture
def nobody_env(tmp_path_factory):
    if not V1:
        pytest.skip("needs cgroup v1 controllers to delegate by chown; on v2 the caller must "
                    "already live in a delegated subtree")
    nobody = pwd.getpwnam("nobody")
    name = f"cella-e2e-user-{uuid.uuid4().hex[:8]}"
    cgs = [f"/sys/fs/cgroup/{c}/{name}" for c in ("memory", "pids", "cpu")]
    base = f"/tmp/{name}"
    os.makedirs(f"{base}/ws")
    for d in cgs:
        os.mkdir(d)
    for d in cgs + [base, f"{base}/ws"]:
        for root, dirs, files in os.walk(d):
            for x in [root] + [os.path.join(root, f) for f in files]:
                try:
                    os.chown(x, nobody.pw_uid, nobody.pw_gid)
                except OSError:
                    pass
    env = {"CELLA_STATE_DIR": f"{base}/state", "CELLA_CGROUP_PARENT": f"/{name}",
           "PATH": "/usr/bin:/bin"}
    yield nobody, base, env
    shutil.rmtree(base, ignore_errors=True)
    for d in cgs:
        for sub in os.listdir(d):
            if os.path.isdir(os.path.join(d, sub)):
                os.rmdir(os.path.join(d, sub))
        os.rmdir(d)


def as_nobody(env, *args, input=None):
    cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", CELLA, "box", *args]
    return subprocess.run(cmd, env=env, capture_output=True, timeout=HANG_LIMIT,
                          input=input, stdin=None if input else subprocess.DEVNULL)


def test_single_mapping_and_ownership(nobody_env):
    nobody, base, env = nobody_env
    p = as_nobody(env, "--workspace", f"{base}/ws", "--", "sh", "-c",
                  "id -u; id -g; cat /proc/self/uid_map /proc/self/gid_map; echo hi > out")
    assert p.returncode == 0, p.stderr
    lines = [l.split() for l in p.stdout.decode().splitlines()]
    assert lines[0] == ["1000"] and lines[1] == ["1000"]
    assert lines[2] == ["1000", str(nobody.pw_uid), "1"]
    assert lines[3] == ["1000", str(nobody.pw_gid), "1"]
    assert os.stat(f"{base}/ws/out").st_uid == nobody.pw_uid


def test_unreadable_dirs_do_not_block_cleanup(nobody_env):
    _, base, env = nobody_env
    p = as_nobody(env, "--", "sh", "-c", "mkdir -p a/b && touch a/b/f && chmod 000 a/b a")
    assert p.returncode == 0, p.stderr
    assert os.listdir(f"{base}/state/workspaces") == []


def test_limits_still_hold(nobody_env):
    _, _, env = nobody_env
    p = as_nobody(env, "--memory-mb", "64", "--", "python3", "-c", "x = b'x' * (512 << 20)")
    assert p.returncode == 137 and b"out of memory" in p.stderr
    p = as_nobody(env, "--timeout", "500ms", "--", "sleep", "30")
    assert p.returncode == 124


def test_probe_finds_no_hole_unprivileged(nobody_env):
    _, base, env = nobody_env
    shutil.copy(PROBE, f"{base}/ws/cella-probe")
    os.chown(f"{base}/ws/cella-probe", pwd.getpwnam("nobody").pw_uid, -1)
    p = as_nobody(env, "--workspace", f"{base}/ws", "--", "/workspace/cella-probe",
                  "--host-hostname", os.uname().nodename, "--absent", "/tmp/" + os.path.basename(base))
    holes = [l for l in p.stdout.decode().splitlines() if l.startswith("HOLE")]
    assert holes == [], "\n".join(holes)
    assert p.returncode == 0, p.stdout.decode() + p.stderr.decode()


def test_no_cgroup_access_fails_closed(nobody_env):
    # Without a writable cgroup, an unprivileged run refuses: limits are not optional.
    _, base, env = nobody_env
    env = dict(env, CELLA_CGROUP_PARENT="/not-delegated")
    p = as_nobody(env, "--", "true")
    assert p.returncode == 125
    assert b"cgroups" in p.stderr
