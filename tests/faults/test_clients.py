"""Clients that hold the daemon's resources without using them: thousands
of idle keep-alive connections, and a client that reads a streamed (SSE)
exec slowly or not at all while the command writes without end. The daemon
keeps answering everyone else, its memory stays bounded, and what the
clients held (descriptors, threads, the command) is given back once they
go.

Covered elsewhere: a client that goes away mid-exec kills its command
(test_daemon.py::test_a_client_that_goes_away_kills_its_command); a slow
download's memory (test_files.py, the 1 GiB transfer) and its hold on a
drain (test_daemon_ops.py::test_drain_timeout_ends_a_drain_held_by_a_slow_download).
"""
import json
import os
import resource
import signal
import socket
import subprocess
import time

import pytest

from conftest import CELLA, HANG_LIMIT
from daemon import Daemon, wait_until


def proc_status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def fds(d):
    return len(os.listdir(f"/proc/{d.proc.pid}/fd"))


@pytest.fixture
def many_files():
    """Lets this process open thousands of sockets; the daemon it starts
    gets the usual soft limit of 1024 (systemd's default) under the same
    hard limit, as a service would."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 8192:
        pytest.skip(f"the hard open-files limit ({hard}) is too low for this test")
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    yield lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def keepalive_healthz(d, n):
    """n connections, each answered once and left open, idle."""
    socks = []
    try:
        for _ in range(n):
            s = socket.create_connection((d.host, d.port), timeout=HANG_LIMIT)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            socks.append(s)
        answers = [s.recv(4096) for s in socks]
    except BaseException:
        for s in socks:
            s.close()
        raise
    return socks, answers


def test_thousands_of_idle_keepalive_connections(tmp_path, many_files):
    """Found by this suite: with max_connections above the soft open-files
    limit (1024 under systemd), accept() failed with EMFILE: the
    connections past it hung in the backlog until they timed out, the
    listener spun, and nothing else could open a file. The daemon now
    raises its soft limit to the hard one at start."""
    cfg = tmp_path / "cella.yaml"
    cfg.write_text("pool_size: 0\nmax_connections: 4096\nmax_connections_per_ip: 4096\n")
    d = Daemon(config=str(cfg)).start()
    many_files()                                  # ours, after the daemon started with 1024
    try:
        sid = d.create("shell")
        assert d.exec(sid, argv=["true"])[0] == 200
        base_fds, base_threads = fds(d), proc_status(d.proc.pid, "Threads")
        socks, answers = keepalive_healthz(d, 2000)
        try:
            assert all(a.startswith(b"HTTP/1.1 200") for a in answers), \
                {a[:40] for a in answers if not a.startswith(b"HTTP/1.1 200")}
            # Everyone else is still served, on a fresh connection.
            assert d.get("/healthz")[0] == 200
            st, b = d.exec(sid, argv=["echo", "still"])
            assert st == 200 and b["stdout"] == "still\n", b
            other = d.create("shell")
            assert d.delete(f"/v1/sandboxes/{other}?wait=true")[0] == 200
        finally:
            for s in socks:
                s.close()
        # What the connections held is given back.
        wait_until(lambda: fds(d) <= base_fds and proc_status(d.proc.pid, "Threads") <= base_threads,
                   limit=60, step=0.2)
    finally:
        d.close()


def test_connections_past_the_limits_are_refused_at_once(tmp_path):
    """Past max_connections_per_ip a connection is closed at once, not left
    hanging, and a slot freed serves the next one. (Connections the daemon
    is still closing may hold a slot for a moment: the count is not asserted
    to the unit.)"""
    cfg = tmp_path / "cella.yaml"
    cfg.write_text("pool_size: 0\nmax_connections: 512\nmax_connections_per_ip: 64\n")
    d = Daemon(config=str(cfg)).start()
    socks = []
    try:
        refused = False
        for _ in range(64 + 16):
            s = socket.create_connection((d.host, d.port), timeout=HANG_LIMIT)
            try:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                got = s.recv(4096)
            except (ConnectionResetError, BrokenPipeError):
                got = b""
            if not got:                           # closed, neither served nor hung
                s.close()
                refused = True
                break
            assert got.startswith(b"HTTP/1.1 200"), got[:60]
            socks.append(s)
        assert refused and 48 <= len(socks) <= 64, len(socks)
        socks.pop(0).close()
        wait_until(lambda: _fresh_ok(d), limit=30, step=0.1)
    finally:
        for s in socks:
            s.close()
        d.close()


def _fresh_ok(d):
    try:
        return d.get("/healthz")[0] == 200
    except OSError:
        return False


def test_max_connections_the_open_files_limit_cannot_carry_is_refused(tmp_path):
    cfg = tmp_path / "cella.yaml"
    cfg.write_text("pool_size: 0\nmax_connections: 4096\nmax_connections_per_ip: 4096\n")

    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CELLA_")}
    p = subprocess.run([CELLA, "serve", "--listen", "127.0.0.1:0", "--state-dir",
                        str(tmp_path / "state"), "--config", str(cfg)],
                       preexec_fn=low_limit, capture_output=True, env=env, timeout=HANG_LIMIT,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 1, p.stderr[-500:]
    assert b"max_connections 4096" in p.stderr and b"ulimit -n" in p.stderr, p.stderr[-500:]


def start_sse(d, sid, argv):
    """A streamed exec on a socket that then reads nothing: a small receive
    buffer, so the daemon's sends block almost at once."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(HANG_LIMIT)
    s.connect((d.host, d.port))
    body = json.dumps({"argv": argv}).encode()
    s.sendall((f"POST /v1/sandboxes/{sid}/exec HTTP/1.1\r\nHost: localhost\r\n"
               f"Accept: text/event-stream\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
    head = s.recv(256)
    assert head.startswith(b"HTTP/1.1 200"), head
    return s


def test_a_stuck_sse_client(tmp_path):
    """A command writes 512 MiB to a streamed exec whose client reads
    nothing, then a little, slowly: the daemon's memory stays within a
    small multiple of output_limit_bytes (1 MiB a stream), other calls are
    answered meanwhile, and once the client goes, its command is killed and
    its descriptors are given back."""
    cfg = tmp_path / "cella.yaml"
    cfg.write_text("pool_size: 0\n")
    d = Daemon(config=str(cfg)).start()
    try:
        sid, other = d.create("shell"), d.create("shell")
        assert d.exec(sid, argv=["true"])[0] == 200
        base_fds = fds(d)
        base_rss = proc_status(d.proc.pid, "VmRSS")
        s = start_sse(d, sid, ["sh", "-c", "head -c 512M /dev/zero | tr '\\0' x; sleep 4713"])
        peak = 0
        end = time.monotonic() + 4
        while time.monotonic() < end:
            peak = max(peak, proc_status(d.proc.pid, "VmRSS"))
            st, b = d.exec(other, argv=["echo", "served"])
            assert st == 200 and b["stdout"] == "served\n", b
            time.sleep(0.2)
        # Reads slowly for a while: the stream moves.
        got = b""
        end = time.monotonic() + 2
        while time.monotonic() < end:
            got += s.recv(1024)
            time.sleep(0.02)
        assert b"event: stdout" in got, got[:200]
        peak = max(peak, proc_status(d.proc.pid, "VmRSS"))
        # 512 MiB went through the command; the daemon kept at most what
        # the output caps allow (and some slack for threads and the heap).
        assert peak - base_rss < 64 * 1024, (base_rss, peak)
        s.close()
        wait_until(lambda: d.get(f"/v1/sandboxes/{sid}")[1]["exec_in_flight"] == 0, limit=60)
        st, b = d.exec(sid, argv=["sh", "-c", "ps -eo comm | grep -c sleep || true"])
        assert b["stdout"] == "0\n", b
        wait_until(lambda: fds(d) <= base_fds, limit=60, step=0.2)
    finally:
        d.close()


def test_a_client_that_reads_nothing_is_dropped(tmp_path):
    """A streamed exec whose client never reads: with output caps large
    enough that the daemon's sends block (the kernel's socket buffers hold
    the default 1 MiB a stream), the connection is dropped after 60 s
    without progress, like any idle one, and the exec's slot is freed: a
    stuck client cannot hold a sandbox's execs (or spare it from the idle
    reaper) for ever."""
    cfg = tmp_path / "cella.yaml"
    cfg.write_text("pool_size: 0\noutput_limit_bytes: 64M\n")
    d = Daemon(config=str(cfg)).start()
    try:
        sid = d.create("shell")
        s = start_sse(d, sid, ["sh", "-c", "head -c 60M /dev/zero | tr '\\0' x"])
        try:
            time.sleep(1)
            assert d.get(f"/v1/sandboxes/{sid}")[1]["exec_in_flight"] == 1
            wait_until(lambda: d.get(f"/v1/sandboxes/{sid}")[1]["exec_in_flight"] == 0,
                       limit=HANG_LIMIT, step=1)
        finally:
            s.close()
        st, b = d.exec(sid, argv=["echo", "free"])
        assert st == 200 and b["stdout"] == "free\n", b
    finally:
        d.close()


def test_idle_connections_do_not_hold_a_drain(tmp_path):
    """SIGTERM waits for running calls, not for idle keep-alive connections."""
    cfg = tmp_path / "cella.yaml"
    cfg.write_text("pool_size: 0\nmax_connections: 1024\nmax_connections_per_ip: 1024\n")
    d = Daemon(config=str(cfg)).start()
    socks, answers = keepalive_healthz(d, 500)
    try:
        assert all(a.startswith(b"HTTP/1.1 200") for a in answers)
        t0 = time.monotonic()
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(HANG_LIMIT) == 0
        assert time.monotonic() - t0 < HANG_LIMIT / 2
    finally:
        for s in socks:
            s.close()
        d.close()
