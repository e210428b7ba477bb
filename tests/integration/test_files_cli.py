"""The client's file commands end to end: `cella upload`, `cella download` and
`cella fs` against a live `cella serve` and real sandboxes (and, for the
failures a daemon does not produce on demand, a fake server)."""
import hashlib
import io
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

import pytest

from conftest import CELLA, HANG_LIMIT
from daemon import Daemon, wait_until

# A well-formed sandbox id that no daemon gave out.
GHOST = "00000000-0000-8000-8000-000000000000"


@pytest.fixture(scope="module")
def d():
    daemon = Daemon(args=("--pool-size", "1")).start()
    yield daemon
    daemon.close()


@pytest.fixture
def sid(d):
    s = d.create("shell")
    yield s
    d.delete(f"/v1/sandboxes/{s}")


def cli_env(url, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("CELLA_")}
    e["CELLA_URL"] = url
    e.update(env or {})
    return e


def cli(d, *args, input=None, env=None, stdin=None):
    url = d if isinstance(d, str) else d.url
    if stdin is None and input is None:
        stdin = subprocess.DEVNULL
    return subprocess.run([CELLA, *args], input=input, stdin=stdin, capture_output=True,
                          env=cli_env(url, env), timeout=HANG_LIMIT)


def ok(p):
    assert p.returncode == 0, (p.returncode, p.stderr.decode(errors="replace"))
    return p


def fs(d, sid, op, body):
    return cli(d, "fs", sid, op, "--json", json.dumps(body))


def sha(data):
    return hashlib.sha256(data).hexdigest()


def file_sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# What a transfer may hold: RLIMIT_DATA (heap and private mappings) well
# under the 64 MiB file, so a client that held the file would fail. The
# sanitizers' shadow memory would not fit: under them, no limit.
DATA_LIMIT = 16 << 20
with open(CELLA, "rb") as _f:
    SANITIZED = b"__asan_init" in _f.read()


def limited():
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_DATA, (DATA_LIMIT, DATA_LIMIT))


def run_limited(args, url, stdin=None, stdout_path=None):
    """Runs cella with its memory bounded (see DATA_LIMIT)."""
    with open(stdout_path or os.devnull, "wb") as fout:
        return subprocess.run([CELLA, *args], stdin=stdin or subprocess.DEVNULL, stdout=fout,
                              stderr=subprocess.PIPE, env=cli_env(url), timeout=HANG_LIMIT,
                              preexec_fn=limited)


# ---- help and usage ----------------------------------------------------------------------

@pytest.mark.parametrize("cmd,needles", [
    ("upload", ["Usage: cella upload [OPTIONS] ID LOCAL REMOTE", "--parents", "--mode MODE",
                "--tar", "--url URL", "Example"]),
    ("download", ["Usage: cella download [OPTIONS] ID REMOTE LOCAL", "--tar", "--url URL",
                  "Example"]),
    ("fs", ["Usage: cella fs [OPTIONS] ID OP [--json BODY]", "--json BODY", "grep", "Example"]),
])
def test_help(cmd, needles):
    for flag in ("--help", "-h"):
        p = ok(subprocess.run([CELLA, cmd, flag], capture_output=True, timeout=HANG_LIMIT))
        out = p.stdout.decode()
        for n in needles:
            assert n in out, (cmd, n)
    p = ok(subprocess.run([CELLA, "--help"], capture_output=True, timeout=HANG_LIMIT))
    assert f"\n  {cmd} " in p.stdout.decode()


def test_usage_errors(tmp_path):
    url = "http://127.0.0.1:1"           # never asked: usage is settled first
    cases = [
        (["upload"], "no sandbox ID given"),
        (["upload", "ID", "x"], "no REMOTE path given"),
        (["download", "ID"], "no REMOTE path given"),
        (["upload", "--mode", "999", "ID", "a", "b"], "not an octal mode"),
        (["upload", "--frob", "ID", "a", "b"], "unknown option '--frob'"),
        (["download", "--parents", "ID", "a", "b"], "does not apply to 'cella download'"),
        (["upload", "ID", "-", "dir/"], "stdin has no name"),
        (["fs", "ID"], "no operation"),
        (["fs", "ID", "frobnicate"], "unknown operation 'frobnicate'"),
        (["fs", "ID", "ls", "--json", "{path: 1}"], "not valid JSON"),
        (["fs", "ID", "ls", "--json", "[1, 2]"], "must be a JSON object"),
        (["upload", "--url", "ftp://x", "ID", "a", "b"], "not an http:// URL"),
    ]
    for args, needle in cases:
        p = cli(url, *args)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
        assert needle in p.stderr.decode(), (args, p.stderr)
        assert f"Try 'cella {args[0]} --help'" in p.stderr.decode() or "URL" in p.stderr.decode()
    assert not os.listdir(tmp_path)
    # a body from stdin is checked as well
    p = cli(url, "fs", "ID", "ls", "--json", "-", input=b"not json")
    assert p.returncode == 2 and b"not valid JSON" in p.stderr


def test_daemon_unreachable(tmp_path):
    src = tmp_path / "a"
    src.write_bytes(b"x")
    for args in (["upload", "ID", str(src), "a"], ["download", "ID", "a", str(tmp_path / "b")],
                 ["fs", "ID", "ls", "--json", "{}"]):
        p = cli("http://127.0.0.1:1", *args)
        assert p.returncode == 125 and b"cannot reach the daemon" in p.stderr, (args, p.stderr)
    assert os.listdir(tmp_path) == ["a"]


# ---- round trips ------------------------------------------------------------------------

def test_binary_round_trip(d, sid, tmp_path):
    data = bytes(range(256)) * 33 + b"\0\r\n\xff"
    src, back = tmp_path / "bytes.bin", tmp_path / "back.bin"
    src.write_bytes(data)
    p = ok(cli(d, "upload", sid, str(src), "bytes.bin"))
    assert p.stdout == b"" and p.stderr == b""      # no terminal: no progress bar
    st, b = d.post(f"/v1/sandboxes/{sid}/fs/stat", {"path": "/workspace/bytes.bin"})
    assert st == 200 and b["size"] == len(data) and b["mode"] == "0644"
    ok(cli(d, "download", sid, "/workspace/bytes.bin", str(back)))
    assert back.read_bytes() == data
    # the raw route agrees, byte for byte
    st, body = d.request("GET", f"/v1/sandboxes/{sid}/files/workspace/bytes.bin")
    assert st == 200
    # an empty file, and a name that needs percent-encoding
    (tmp_path / "empty").write_bytes(b"")
    ok(cli(d, "upload", sid, str(tmp_path / "empty"), "/workspace/a b%#?.txt"))
    ok(cli(d, "download", sid, "a b%#?.txt", str(tmp_path / "empty.back")))
    assert (tmp_path / "empty.back").read_bytes() == b""
    names = [e["name"] for e in json.loads(ok(fs(d, sid, "ls", {"path": "/workspace"})).stdout)
             ["entries"]]
    assert "a b%#?.txt" in names


def test_stdin_and_stdout(d, sid, tmp_path):
    data = bytes(range(256)) * 4
    ok(cli(d, "upload", sid, "-", "piped.bin", input=data))
    p = ok(cli(d, "download", sid, "piped.bin", "-"))
    assert p.stdout == data
    # stdin redirected from a file: its size is known (and sent as such)
    src = tmp_path / "f"
    src.write_bytes(data[:100])
    with open(src, "rb") as f:
        ok(cli(d, "upload", sid, "-", "redirected.bin", stdin=f))
    assert ok(cli(d, "download", sid, "redirected.bin", "-")).stdout == data[:100]
    assert os.listdir(tmp_path) == ["f"]


def test_large_file_streams(d, sid, tmp_path):
    size = 64 << 20
    src = tmp_path / "big.bin"
    with open(src, "wb") as f:
        for _ in range(size >> 20):
            f.write(os.urandom(1 << 20))
    want = file_sha(src)
    ok(run_limited(["upload", sid, str(src), "big.bin"], d.url))
    back = tmp_path / "back.bin"
    ok(run_limited(["download", sid, "big.bin", str(back)], d.url))
    assert back.stat().st_size == size and file_sha(back) == want
    # through pipes: an upload of unknown length goes chunked
    cat = subprocess.Popen(["cat", str(src)], stdout=subprocess.PIPE)
    p = run_limited(["upload", sid, "-", "piped.bin"], d.url, stdin=cat.stdout)
    cat.stdout.close()
    cat.wait()
    ok(p)
    st, b = d.post(f"/v1/sandboxes/{sid}/fs/stat", {"path": "/workspace/piped.bin"})
    assert b["size"] == size
    out = tmp_path / "stdout.bin"
    ok(run_limited(["download", sid, "piped.bin", "-"], d.url, stdout_path=out))
    assert file_sha(out) == want
    # the limit bites: a program that holds the file does not get far
    if not SANITIZED:
        p = subprocess.run([sys.executable, "-c", f"open({str(src)!r}, 'rb').read()"],
                           capture_output=True, preexec_fn=limited, timeout=HANG_LIMIT)
        assert p.returncode != 0 and b"MemoryError" in p.stderr


def test_progress_bar_on_a_terminal(d, sid, tmp_path):
    src = tmp_path / "p.bin"
    src.write_bytes(os.urandom(3 << 20))
    master, slave = os.openpty()
    try:
        p = subprocess.run([CELLA, "upload", sid, str(src), "p.bin"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=slave, env=cli_env(d.url),
                           timeout=HANG_LIMIT)
        os.close(slave)
        slave = -1
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    assert p.returncode == 0
    text = seen.decode(errors="replace")
    assert "100%" in text and "3.0 MiB / 3.0 MiB" in text and "/s" in text, text


# ---- parents, modes, directories -------------------------------------------------------------

def test_parents_and_mode(d, sid, tmp_path):
    src = tmp_path / "run.sh"
    src.write_bytes(b"#!/bin/sh\necho ran\n")
    os.chmod(src, 0o644)
    p = cli(d, "upload", sid, str(src), "deep/er/run.sh")
    assert p.returncode == 125
    err = p.stderr.decode()
    assert "not found" in err and "fix:" in err and "--parents" in err, err
    st, b = d.post(f"/v1/sandboxes/{sid}/fs/stat", {"path": "/workspace/deep"})
    assert st == 404
    ok(cli(d, "upload", "--parents", "--mode", "0755", sid, str(src), "deep/er/run.sh"))
    st, b = d.exec(sid, argv=["/workspace/deep/er/run.sh"])
    assert b["stdout"] == "ran\n"
    st, b = d.post(f"/v1/sandboxes/{sid}/fs/stat", {"path": "/workspace/deep/er/run.sh"})
    assert b["mode"] == "0755"
    # without --mode, the local file's permissions come along, as with cp
    os.chmod(src, 0o700)
    ok(cli(d, "upload", sid, str(src), "deep/own.sh"))
    st, b = d.post(f"/v1/sandboxes/{sid}/fs/stat", {"path": "/workspace/deep/own.sh"})
    assert b["mode"] == "0700"
    # a REMOTE ending in '/' is a directory: the file keeps its name
    ok(cli(d, "upload", "--parents", sid, str(src), "into/"))
    st, b = d.post(f"/v1/sandboxes/{sid}/fs/stat", {"path": "/workspace/into/run.sh"})
    assert st == 200
    # ... and a LOCAL directory takes the remote file's name
    out = tmp_path / "out"
    out.mkdir()
    ok(cli(d, "download", sid, "/workspace/into/run.sh", str(out)))
    assert (out / "run.sh").read_bytes() == src.read_bytes()
    # a directory is not a file
    p = cli(d, "download", sid, "into", str(tmp_path / "x"))
    assert p.returncode == 125 and b"--tar" in p.stderr
    p = cli(d, "upload", sid, str(src), "into")
    assert p.returncode == 125 and b"end REMOTE with '/'" in p.stderr
    p = cli(d, "upload", sid, str(out), "x")
    assert p.returncode == 125 and b"is a directory" in p.stderr and b"--tar" in p.stderr


def test_download_failures_leave_nothing(d, sid, tmp_path):
    p = cli(d, "download", sid, "missing.txt", str(tmp_path / "m.txt"))
    assert p.returncode == 125
    err = p.stderr.decode()
    assert "not found" in err and "fix:" in err, err
    assert os.listdir(tmp_path) == []
    # an existing file is left as it was
    keep = tmp_path / "keep.txt"
    keep.write_bytes(b"keep")
    p = cli(d, "download", sid, "missing.txt", str(keep))
    assert p.returncode == 125 and keep.read_bytes() == b"keep"
    assert os.listdir(tmp_path) == ["keep.txt"]
    p = cli(d, "download", GHOST, "x", str(tmp_path / "y"))
    assert p.returncode == 125 and b"not found" in p.stderr
    assert os.listdir(tmp_path) == ["keep.txt"]


def test_upload_refused_early(d, tmp_path):
    # The daemon refuses at the headers (no such sandbox): its answer comes
    # back, not a broken pipe, though 64 MiB were on their way.
    src = tmp_path / "big"
    with open(src, "wb") as f:
        f.truncate(64 << 20)
    p = cli(d, "upload", GHOST, str(src), "big")
    assert p.returncode == 125
    assert b"sandbox not found" in p.stderr and b"fix:" in p.stderr, p.stderr


# ---- tar ----------------------------------------------------------------------------------------

def make_tar(files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, data in files.items():
            if data is None:
                ti = tarfile.TarInfo(name)
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
                t.addfile(ti)
            else:
                ti = tarfile.TarInfo(name)
                ti.size, ti.mode = len(data), 0o644
                t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def test_tar_upload_and_download(d, sid, tmp_path):
    files = {"src": None, "src/a.txt": b"alpha\n", "src/sub": None,
             "src/sub/b.bin": bytes(range(256)), "top.txt": b"top\n"}
    tar = tmp_path / "in.tar"
    tar.write_bytes(make_tar(files))
    p = cli(d, "upload", "--tar", sid, str(tar), "proj")
    assert p.returncode == 125 and b"--parents" in p.stderr, p.stderr
    ok(cli(d, "upload", "--tar", "--parents", sid, str(tar), "proj"))
    assert ok(cli(d, "download", sid, "proj/src/sub/b.bin", "-")).stdout == bytes(range(256))
    # from stdin, into an absolute directory
    ok(cli(d, "upload", "--tar", "--parents", sid, "-", "/workspace/piped/",
           input=make_tar({"x.txt": b"x\n"})))
    assert ok(cli(d, "download", sid, "piped/x.txt", "-")).stdout == b"x\n"

    # the directory back as a tar: to a file, then to stdout
    out = tmp_path / "out.tar"
    ok(cli(d, "download", "--tar", sid, "proj", str(out)))
    with tarfile.open(out) as t:
        got = {m.name.lstrip("./"): (t.extractfile(m).read() if m.isfile() else None)
               for m in t.getmembers() if m.name not in (".", "./")}
    for name, data in files.items():
        assert got.get(name, "absent") == data, name
    p = ok(cli(d, "download", "--tar", sid, "/workspace/proj", "-"))
    with tarfile.open(fileobj=io.BytesIO(p.stdout)) as t:
        assert any(m.name.endswith("sub/b.bin") for m in t.getmembers())
    # a tar goes to a file, not into a directory
    p = cli(d, "download", "--tar", sid, "proj", str(tmp_path))
    assert p.returncode == 125 and b"is a directory" in p.stderr
    p = cli(d, "download", "--tar", sid, "nothing-here", str(tmp_path / "n.tar"))
    assert p.returncode == 125 and not (tmp_path / "n.tar").exists()


# ---- fs ------------------------------------------------------------------------------------------

def test_fs_operations(d, sid):
    p = ok(cli(d, "fs", sid, "mkdir", "--json", '{"path": "/workspace/d/e", "parents": true}'))
    assert json.loads(p.stdout)
    ok(fs(d, sid, "write", {"path": "/workspace/d/e/note.txt", "content": "TODO: a\nfine\n"}))
    p = ok(cli(d, "fs", sid, "ls", "--json", '{"path":"/workspace"}'))
    # pretty: one field a line, indented
    assert b"\n  " in p.stdout and p.stdout.endswith(b"}\n")
    entries = json.loads(p.stdout)["entries"]
    assert [e["name"] for e in entries if e["is_dir"]] == ["d"]
    b = json.loads(ok(fs(d, sid, "stat", {"path": "/workspace/d/e/note.txt"})).stdout)
    assert b["size"] == 13 and b["is_dir"] is False
    b = json.loads(ok(fs(d, sid, "read", {"path": "/workspace/d/e/note.txt"})).stdout)
    assert "TODO: a" in json.dumps(b)
    ok(fs(d, sid, "mv", {"src": "/workspace/d/e/note.txt", "dst": "/workspace/d/note.txt"}))
    ok(fs(d, sid, "chmod", {"path": "/workspace/d/note.txt", "mode": "0600"}))
    b = json.loads(ok(fs(d, sid, "stat", {"path": "/workspace/d/note.txt"})).stdout)
    assert b["mode"] == "0600"
    # the request from stdin
    p = ok(cli(d, "fs", sid, "stat", "--json", "-", input=b'{"path": "/workspace/d"}'))
    assert json.loads(p.stdout)["is_dir"] is True
    # an error from the daemon: its message and fix, exit 125
    p = fs(d, sid, "ls", {"path": "/workspace/nope"})
    assert p.returncode == 125 and p.stdout == b""
    assert b"not found" in p.stderr and b"fix:" in p.stderr
    p = fs(d, sid, "ls", {"path": "/workspace", "colour": "red"})
    assert p.returncode == 125 and b"colour" in p.stderr
    ok(fs(d, sid, "rm", {"path": "/workspace/d", "recursive": True}))
    assert fs(d, sid, "stat", {"path": "/workspace/d"}).returncode == 125


def test_fs_search_operations(d, sid):
    ok(fs(d, sid, "write", {"path": "/workspace/s/a.py", "content": "x = 1  # TODO\n",
                            "parents": True}))
    ok(fs(d, sid, "write", {"path": "/workspace/s/b.txt", "content": "nothing\n"}))
    p = ok(fs(d, sid, "grep", {"path": "/workspace", "pattern": "TODO", "recursive": True}))
    assert [m["path"] for m in json.loads(p.stdout)["matches"]] == ["/workspace/s/a.py"]
    p = ok(fs(d, sid, "glob", {"path": "/workspace", "pattern": "**/*.py"}))
    assert "/workspace/s/a.py" in p.stdout.decode()
    ok(fs(d, sid, "sed", {"files": ["/workspace/s/a.py"], "pattern": "TODO",
                          "replacement": "DONE"}))
    assert ok(cli(d, "download", sid, "s/a.py", "-")).stdout == b"x = 1  # DONE\n"


# ---- what a daemon does not do on demand: a fake server ------------------------------------------

class FakeServer:
    """Answers every connection with `head` + `body`, then `after`: close
    (a body cut short) or hang (a transfer that never ends)."""

    def __init__(self, head, body, hang=False):
        self.head, self.body, self.hang = head, body, hang
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while not self.stop.is_set():
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            c.recv(65536)
            c.sendall(self.head + self.body)
            if self.hang:
                self.stop.wait(HANG_LIMIT)
            c.close()

    def close(self):
        self.stop.set()
        self.sock.close()


def test_short_body_is_a_failure(tmp_path):
    srv = FakeServer(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", b"x" * 10)
    try:
        keep = tmp_path / "keep"
        keep.write_bytes(b"old")
        for target in ("new", "keep"):
            p = cli(srv.url, "download", "ID", "f", str(tmp_path / target))
            assert p.returncode == 125
            assert b"broke off after 10 of 1000 bytes" in p.stderr, p.stderr
        assert os.listdir(tmp_path) == ["keep"] and keep.read_bytes() == b"old"
        # to stdout, what came was written; the exit status says it is not all
        p = cli(srv.url, "download", "ID", "f", "-")
        assert p.returncode == 125 and p.stdout == b"x" * 10
    finally:
        srv.close()


def test_interrupted_download_leaves_nothing(tmp_path):
    srv = FakeServer(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", b"y" * 5000,
                     hang=True)
    try:
        p = subprocess.Popen([CELLA, "download", "ID", "f", str(tmp_path / "out")],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=cli_env(srv.url))
        # the temporary sibling exists while the bytes come
        wait_until(lambda: os.listdir(tmp_path))
        assert os.listdir(tmp_path)[0].startswith(".out.cella-")
        p.send_signal(signal.SIGINT)
        assert p.wait(HANG_LIMIT) == -signal.SIGINT
        p.stderr.close()
        assert os.listdir(tmp_path) == []
    finally:
        srv.close()
