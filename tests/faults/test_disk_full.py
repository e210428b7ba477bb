"""The state directory's disk full: the daemon's state directory lives on
a small tmpfs this test mounts (and unmounts), which a file on the host
side then fills to the last block. Calls that need room answer clear errors
(S300 for a create, whose record cannot be written; S216 for an upload),
calls that do not (exec, stop, health) keep working, the daemon neither
crashes nor corrupts its SQLite database, restarts on the full disk, and
recovers by itself once room is freed.

The disk is filled first from inside a sandbox (the workspaces are in the
state directory, so a sandbox writing without bound fills the daemon's
disk: its writes fail with ENOSPC like any program's), then to the last
block by a file on the host side. (A sandbox filling its /tmp, a tmpfs of
its own, is test_resources.py's.)
"""
import os
import sqlite3
import subprocess

import pytest

from conftest import CELLA, HANG_LIMIT
from daemon import Daemon, err_code, wait_until


@pytest.fixture
def small_disk(tmp_path):
    mnt = tmp_path / "disk"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0700", "cella-faults", str(mnt)],
                   check=True)
    try:
        yield str(mnt)
    finally:
        if subprocess.run(["umount", str(mnt)]).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)])


def fill(path):
    """Writes zeros to path until the disk refuses; returns the bytes written."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    n = 0
    try:
        while True:
            n += os.write(fd, b"\0" * 4096)
    except OSError as e:
        assert e.errno == 28, e              # ENOSPC
    finally:
        os.close(fd)
    # The last few blocks too, a byte at a time.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        while True:
            n += os.write(fd, b"\0")
    except OSError:
        pass
    finally:
        os.close(fd)
    return n


def live_ids(d):
    st, b = d.get("/v1/sandboxes")
    assert st == 200, b
    return {s["sandbox_id"] for s in b["sandboxes"]}


def test_state_directory_disk_full(tmp_path, small_disk):
    state = os.path.join(small_disk, "state")
    cfg = tmp_path / "cella.yaml"
    cfg.write_text("pool_size: 0\n")
    env = {"CELLA_REAP_INTERVAL_MS": "200"}
    started = []

    def daemon():
        x = Daemon(state_dir=state, config=str(cfg), env=env)
        started.append(x)
        return x.start()

    try:
        d = daemon()
        keep = d.create("shell")
        gone = d.create("shell")
        st, b = d.exec(keep, argv=["sh", "-c", "echo precious > /workspace/p"])
        assert st == 200 and b["exit_code"] == 0, b

        st, b = d.exec(keep, argv=["sh", "-c", "head -c 32M /dev/zero > /workspace/big"])
        assert st == 200 and "No space left" in b["stderr"], b
        filler = os.path.join(small_disk, "filler")
        fill(filler)

        # Calls that need room answer clear errors; the daemon stays up.
        st, b = d.post("/v1/sandboxes", {"image": "shell"})
        assert st == 500 and err_code(b) == "S300" and "disk is full" in b["error"]["message"], b
        st, b = d.request("PUT", f"/v1/sandboxes/{keep}/files/workspace/up.bin", raw=b"u" * 300000)
        assert st == 500 and err_code(b) == "S216" and "No space left" in b["error"]["message"], b
        st, b = d.post(f"/v1/sandboxes/{keep}/fs/write", {"path": "/workspace/w.txt", "content": "w"})
        assert st == 500 and err_code(b) == "S216", b
        st, b = d.post("/execute", {"code": "print(1)", "session_id": "full"})
        assert st == 500 and b["code"] == "S300", b
        # Calls that need none work.
        st, b = d.exec(keep, argv=["cat", "/workspace/p"])
        assert st == 200 and b["stdout"] == "precious\n", b
        assert d.get("/healthz")[0] == 200 and d.get("/readyz")[0] == 200
        assert d.proc.poll() is None
        # A failed upload leaves nothing behind.
        st, b = d.exec(keep, argv=["ls", "-A", "/workspace"])
        assert b["stdout"] == "big\np\n", b

        # A crash and a restart on the full disk: the sandboxes come back.
        d.kill()
        d = daemon()
        assert live_ids(d) == {keep, gone}
        st, b = d.exec(keep, argv=["cat", "/workspace/p"])
        assert st == 200 and b["stdout"] == "precious\n", b

        # Found by this suite: a stop on the full disk answered "stopped" but
        # its record stayed (SQLite needs room to delete), so the next start
        # brought the stopped sandbox back with an empty workspace. The delete
        # is now retried until there is room.
        assert d.delete(f"/v1/sandboxes/{gone}?wait=true")[0] == 200
        assert live_ids(d) == {keep}

        # Room again: the daemon recovers by itself.
        os.unlink(filler)
        st, b = d.exec(keep, argv=["rm", "/workspace/big"])
        assert st == 200 and b["exit_code"] == 0, b
        try:   # a reaper pass (every 200 ms here) retries the delete
            wait_until(lambda: any(f"event=record_deleted sandbox={gone}" in l for l in d.log),
                       limit=30)
        except AssertionError:
            pass   # asserted below, by what a restart lists
        fresh = d.create("shell")
        st, b = d.request("PUT", f"/v1/sandboxes/{fresh}/files/workspace/up.bin", raw=b"u" * 300000)
        assert st == 200, b
        d.kill()

        d = daemon()
        try:
            assert live_ids(d) == {keep, fresh}
            st, b = d.exec(fresh, argv=["wc", "-c", "/workspace/up.bin"])
            assert b["stdout"] == "300000 /workspace/up.bin\n", b
            # One workspace per live sandbox: the failed creates left none.
            assert set(os.listdir(os.path.join(state, "workspaces"))) == {keep, fresh}
        finally:
            d.close()
        db = sqlite3.connect(os.path.join(state, "cella.db"))
        try:
            assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        finally:
            db.close()
    finally:
        for x in started:            # a failed assertion must not leave a daemon running
            if x.proc and x.proc.poll() is None:
                x.kill()


def test_a_first_start_on_a_full_disk_says_why(tmp_path, small_disk):
    """No room for the node key or the database: the daemon does not start,
    says why, and leaves no half-written file for the next start."""
    fill(os.path.join(small_disk, "filler"))
    state = os.path.join(small_disk, "state")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CELLA_")}
    p = subprocess.run([CELLA, "serve", "--listen", "127.0.0.1:0", "--state-dir", state],
                       capture_output=True, env=env, timeout=HANG_LIMIT, stdin=subprocess.DEVNULL)
    assert p.returncode == 1 and b"No space left on device" in p.stderr, p.stderr[-500:]
    left = []
    for root, _, files in os.walk(state):
        left += [f for f in files if f.startswith(".")]
    assert left == [], left
