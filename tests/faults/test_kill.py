"""Processes killed half-way: the daemon SIGKILLed mid-exec and mid-upload,
and a client that goes away mid-upload. After a restart on the same state
directory the sandboxes are back and usable, and no workspace holds a
partial file or one of the hidden temporaries (`.cella-*.tmp`) an upload
writes before its rename.

Covered elsewhere, not repeated here:
- an agent SIGKILLed mid-exec (the call answers S004, the sandbox is listed
  `dead` and can be stopped): test_daemon.py::test_sandbox_dying_mid_exec,
  and for file calls test_files_errors.py::test_calls_on_a_stopped_or_dead_sandbox;
- an agent SIGKILLed mid-upload (no partial file):
  test_files.py::test_agent_killed_mid_upload_leaves_no_partial_file;
- the daemon SIGKILLed between calls (sandboxes, files and environment
  back after the restart, nothing left running):
  test_daemon_ops.py::test_sigkill_and_restart_keep_sandboxes_and_files;
- SIGTERM drains (running calls finish): test_daemon_ops.py::test_sigterm_drains.
"""
import http.client
import json
import os
import socket
import struct
import threading
import time

import pytest

from conftest import HANG_LIMIT
from daemon import Daemon, agent_pids, err_code, wait_until


@pytest.fixture
def started():
    """Daemons a test started; any still running when it ends (a failed
    assertion) is killed, so none outlives the test."""
    daemons = []
    yield daemons
    for x in daemons:
        if x.proc and x.proc.poll() is None:
            x.kill()


def serve(started, **kw):
    d = Daemon(**kw)
    started.append(d)
    return d.start()


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def leftovers(state, sid):
    """Every hidden temporary in a sandbox's workspace, seen from the host."""
    found = []
    for root, _, files in os.walk(os.path.join(state, "workspaces", sid)):
        found += [os.path.join(root, f) for f in files if f.startswith(".cella-")]
    return found


def ppid(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("PPid:"):
                    return int(line.split()[1])
    except OSError:
        return None


def own_agents(d):
    """This daemon's agents and their children: other daemons (other tests,
    other users of the machine) have agents of their own."""
    mine, pids = set(), agent_pids()
    grew = True
    while grew:
        new = {p for p in pids if p not in mine and (ppid(p) == d.proc.pid or ppid(p) in mine)}
        mine |= new
        grew = bool(new)
    return mine


def kill_and_wait(d):
    """SIGKILLs the daemon and waits until its agents and their children are
    gone (each agent ends when its daemon's socket closes)."""
    agents = own_agents(d)
    assert agents
    d.kill()
    wait_until(lambda: not (set(agent_pids()) & agents), limit=60)


def reset_close(sock):
    """Closes with a reset, as a crashed client's kernel would."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def test_daemon_killed_mid_exec(tmp_path, started):
    """Two execs in flight (one plain, one streamed) when the daemon dies:
    their clients see the connection end, nothing of the commands runs on,
    and after the restart the sandbox is listed with no exec in flight,
    runs commands again, and keeps what the commands wrote before."""
    state = str(tmp_path / "state")
    cfg = write(tmp_path, "cella.yaml", "pool_size: 0\n")
    d = serve(started, state_dir=state, config=cfg)
    sid = d.create("shell")
    results = []

    def plain():
        try:
            results.append(d.exec(sid, argv=["sh", "-c", "echo kept > /workspace/a; sleep 4711"]))
        except (OSError, ConnectionError) as e:      # the daemon is gone: no answer
            results.append(e)
    t = threading.Thread(target=plain)
    t.start()
    c = d.conn()
    c.request("POST", f"/v1/sandboxes/{sid}/exec",
              body=json.dumps({"argv": ["sh", "-c", "echo up; sleep 4712"]}),
              headers={"Accept": "text/event-stream"})
    r = c.getresponse()
    assert r.status == 200
    wait_until(lambda: d.get(f"/v1/sandboxes/{sid}")[1]["exec_in_flight"] == 2)
    wait_until(lambda: os.path.exists(os.path.join(state, "workspaces", sid, "a")))
    kill_and_wait(d)
    t.join(HANG_LIMIT)
    assert not t.is_alive() and isinstance(results[0], Exception), results
    with pytest.raises(http.client.IncompleteRead):   # cut, not hung, and never ended as if whole
        r.read()
    c.close()
    from conftest import host_processes_matching
    # Nothing of the commands runs on (they die with their sandbox's PID 1).
    wait_until(lambda: host_processes_matching(r"^sleep 471[12] ") == [], limit=60)

    d2 = serve(started, state_dir=state, config=cfg)
    try:
        st, info = d2.get(f"/v1/sandboxes/{sid}")
        assert st == 200 and info["state"] != "dead" and info["exec_in_flight"] == 0, info
        st, b = d2.exec(sid, argv=["sh", "-c", "cat /workspace/a; ps -eo comm | grep -c sleep || true"])
        assert st == 200 and b["stdout"] == "kept\n0\n", b
        assert d2.delete(f"/v1/sandboxes/{sid}?wait=true")[0] == 200
    finally:
        d2.close()


@pytest.mark.parametrize("chunked", [False, True], ids=["length", "chunked"])
def test_daemon_killed_mid_upload(tmp_path, chunked, started):
    """A PUT streaming in when the daemon dies: neither the file nor a
    temporary is in the workspace, before or after the restart, and the
    same upload then succeeds. A chunked body has no declared length, so
    the end of the agent's stdin must never read as the end of the body."""
    state = str(tmp_path / "state")
    cfg = write(tmp_path, "cella.yaml", "pool_size: 0\n")
    d = serve(started, state_dir=state, config=cfg)
    sid = d.create("shell")
    before = own_agents(d)
    sock = socket.create_connection((d.host, d.port))
    head = f"PUT /v1/sandboxes/{sid}/files/workspace/up.bin HTTP/1.1\r\nHost: localhost\r\n"
    head += "Transfer-Encoding: chunked\r\n\r\n" if chunked else "Content-Length: 100000000\r\n\r\n"
    part = b"u" * (1 << 20)
    sock.sendall(head.encode())
    for _ in range(4):
        sock.sendall(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
    # The write is running in the sandbox: a child of the agent (the file
    # operations run in forks of the agent's own image).
    wait_until(lambda: own_agents(d) - before)
    time.sleep(0.3)
    kill_and_wait(d)
    reset_close(sock)
    ws = os.path.join(state, "workspaces", sid)
    assert os.listdir(ws) == [] and leftovers(state, sid) == []

    d2 = serve(started, state_dir=state, config=cfg)
    try:
        assert os.listdir(ws) == []
        st, b = d2.request("PUT", f"/v1/sandboxes/{sid}/files/workspace/up.bin", raw=b"whole")
        assert st == 200, b
        st, b = d2.exec(sid, argv=["cat", "/workspace/up.bin"])
        assert b["stdout"] == "whole"
    finally:
        d2.close()


def batch(n_files=48):
    """A gateway copy: one archive, written all or nothing (tar-extract
    atomic=1: every file under a hidden temporary until the last is in)."""
    files = [{"path": f"batch/f{i}.bin", "content": chr(97 + i % 26) * (1 << 20)}
             for i in range(n_files)]
    return json.dumps({"files": files}).encode()


BATCH_CFG = "pool_size: 0\nmax_body_bytes: 128M\n"


def start_batch(d, session, body):
    sock = socket.create_connection((d.host, d.port))
    sock.sendall((f"POST /sessions/default/{session}/copy HTTP/1.1\r\nHost: localhost\r\n"
                  f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
                 + body)
    return sock


def caught_mid_batch(d, state, sid, session, body, act):
    """Starts a batch and calls act() while its temporaries are on disk.
    Returns False when the batch finished before one was seen (a fast
    machine): the caller tries again."""
    sock = start_batch(d, session, body)
    deadline = time.monotonic() + HANG_LIMIT
    while not leftovers(state, sid):
        if time.monotonic() > deadline:
            raise AssertionError("the batch never started")
        sock.setblocking(False)
        try:
            if sock.recv(1 << 16):                    # answered: it finished first
                sock.close()
                return False
        except BlockingIOError:
            pass
        time.sleep(0.001)
    act(sock)
    return True


def test_daemon_killed_mid_batch_write(tmp_path, started):
    """Found by this suite: the daemon SIGKILLed while a batch write was
    half-way left its hidden temporaries (and the directories it made) in
    the session's workspace for good, since the agent's exit killed the
    operation outright. The agent now cancels its file operations and waits
    (a bounded grace) for them to undo what they started before it exits."""
    state = str(tmp_path / "state")
    cfg = write(tmp_path, "cella.yaml", BATCH_CFG)
    d = serve(started, state_dir=state, config=cfg)
    st, b = d.post("/execute", {"code": "print(1)", "session_id": "s1"})
    assert st == 200, b
    sid = b["sandbox_id"]
    body = batch()
    for _ in range(5):
        if caught_mid_batch(d, state, sid, "s1", body, lambda sock: kill_and_wait(d)):
            break
        st, b = d.post("/bash", {"command": "rm -rf /workspace/batch", "session_id": "s1"})
    else:
        pytest.skip("every batch finished before it could be caught half-way")
    ws = os.path.join(state, "workspaces", sid)
    assert leftovers(state, sid) == [] and not os.path.exists(os.path.join(ws, "batch"))

    d2 = serve(started, state_dir=state, config=cfg)
    try:
        st, b = d2.post("/bash", {"command": "ls -A /workspace", "session_id": "s1"})
        assert st == 200 and b["stdout"] == "artifacts\n", b
        assert leftovers(state, sid) == []
    finally:
        d2.close()


def test_client_gone_mid_batch_write(tmp_path, started):
    """Found by this suite: a client that went away while its batch write
    was half-way left the batch's temporaries in the live workspace (the
    daemon abandoned the operation with SIGKILL). It is now cancelled and
    undoes itself: nothing of the batch is left."""
    cfg = write(tmp_path, "cella.yaml", BATCH_CFG)
    d = serve(started, config=cfg)
    try:
        st, b = d.post("/execute", {"code": "print(1)", "session_id": "s2"})
        assert st == 200, b
        sid = b["sandbox_id"]
        body = batch()
        for _ in range(5):
            if caught_mid_batch(d, d.state_dir, sid, "s2", body, reset_close):
                break
            d.post("/bash", {"command": "rm -rf /workspace/batch", "session_id": "s2"})
        else:
            pytest.skip("every batch finished before it could be caught half-way")
        # The session is free again once the abandoned call is over.
        def clean():
            st, b = d.post("/bash", {"command": "ls -A /workspace", "session_id": "s2"})
            return st == 200 and b["stdout"] == "artifacts\n" and not leftovers(d.state_dir, sid)
        wait_until(clean, limit=60, step=0.2)
    finally:
        d.close()


def agent_of_sleep(d, tag):
    """The host pid of d's agent (a child of the daemon) whose sandbox runs
    `sleep TAG`."""
    want = b"sleep\0" + tag.encode() + b"\0"
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and open(f"/proc/{pid}/cmdline", "rb").read() == want:
                p = int(pid)
                while p and ppid(p) not in (d.proc.pid, None, 0, 1):
                    p = ppid(p)
                if p and ppid(p) == d.proc.pid:
                    return p
        except OSError:
            pass


def test_agent_killed_mid_exec_in_every_shape(tmp_path, started):
    """The plain native exec is test_daemon.py's; here the same death under
    a streamed exec (the stream's last event is the error), the iii dialect
    and a gateway session (whose next call gets a new sandbox)."""
    import signal
    cfg = write(tmp_path, "cella.yaml", "pool_size: 0\n")
    d = serve(started, config=cfg)
    # Streamed.
    sid = d.create("shell")
    c = d.conn()
    c.request("POST", f"/v1/sandboxes/{sid}/exec",
              body=json.dumps({"argv": ["sh", "-c", "echo up; sleep 4721"]}),
              headers={"Accept": "text/event-stream"})
    r = c.getresponse()
    assert r.status == 200
    os.kill(wait_until(lambda: agent_of_sleep(d, "4721")), signal.SIGKILL)
    text = r.read().decode()                      # ends: the stream is closed after the error
    c.close()
    events = [e for e in text.split("\n\n") if e.strip() and not e.startswith(":")]
    assert events[0].startswith("event: stdout") and events[-1].startswith("event: error"), text
    assert json.loads(events[-1].split("data: ", 1)[1])["error"]["code"] == "S004", text
    wait_until(lambda: d.get(f"/v1/sandboxes/{sid}")[1]["state"] == "dead")
    assert d.delete(f"/v1/sandboxes/{sid}?wait=true")[0] == 200
    # iii.
    sid = d.create("shell")
    res = []
    t = threading.Thread(target=lambda: res.append(d.post("/v1/trigger", {
        "function_id": "sandbox::exec",
        "payload": {"sandbox_id": sid, "cmd": "sleep", "args": ["4722"]}})))
    t.start()
    os.kill(wait_until(lambda: agent_of_sleep(d, "4722")), signal.SIGKILL)
    t.join(HANG_LIMIT)
    st, b = res[0]
    assert st == 410 and b["code"] == "S004" and "agent exited" in b["message"], res
    st, b = d.post("/v1/trigger", {"function_id": "sandbox::stop", "payload": {"sandbox_id": sid}})
    assert st == 200 and b["stopped"] is True, b
    # A gateway session.
    res = []
    t = threading.Thread(target=lambda: res.append(
        d.post("/bash", {"command": "sleep 4723", "session_id": "dies"})))
    t.start()
    os.kill(wait_until(lambda: agent_of_sleep(d, "4723")), signal.SIGKILL)
    t.join(HANG_LIMIT)
    st, b = res[0]
    assert st == 410 and b["code"] == "S004" and b["exit_code"] == -1, res
    st, b2 = d.post("/bash", {"command": "echo again", "session_id": "dies"})
    assert st == 200 and b2["stdout"] == "again\n" and b2["sandbox_id"] != b["sandbox_id"], b2
    d.close()
