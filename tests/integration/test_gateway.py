"""The Code Sandbox gateway dialect end to end: sessions keyed by (tenant_id,
session_id) made on first use and reused, on both prefixes (/ and
/v1/sandbox/); /execute with a session_id, /bash, /read, /read_binary,
/write, /grep, /glob and /sessions...; tenants and admin-only routes; the
session cap; copy all or nothing; artifacts new or changed by a call;
timeouts; read windows; hostile paths; a daemon restart; idle cleanup.
A real daemon, real sandboxes."""
import base64
import http.client
import json
import os
import subprocess
import threading
import time

import pytest

from conftest import HANG_LIMIT
from daemon import Daemon, wait_until

ALICE = "tok-alice-0123456789abcdef"
BOB = "tok-bob-0123456789abcdefgh"
ADMIN = "tok-admin-0123456789abcdef"
PREFIXES = ("", "/v1/sandbox")
EXEC_KEYS = {"stdout", "stderr", "exit_code", "timed_out", "error", "sandbox_id", "artifacts"}


def tokens_file(tmp):
    p = tmp / "tokens"
    p.write_text(f"{ALICE} alice\n{BOB} bob\n{ADMIN} ops admin\n")
    os.chmod(p, 0o600)
    return str(p)


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gateway")
    daemon = Daemon(tokens=tokens_file(tmp)).start()
    yield daemon
    daemon.close()


_n = [0]


def new_sid():
    _n[0] += 1
    return f"s{os.getpid()}-{_n[0]}"


def post(d, route, body, token=ALICE, prefix=""):
    return d.post(prefix + route, body, token=token)


def ok(d, route, body, token=ALICE, prefix=""):
    st, b = post(d, route, body, token, prefix)
    assert st == 200, (route, st, b)
    return b


def err(d, route, body, token=ALICE, status=None, code=None, prefix=""):
    st, b = post(d, route, body, token, prefix)
    assert st >= 400 and isinstance(b.get("error"), str) and b.get("code"), (route, st, b)
    if status:
        assert st == status, (st, b)
    if code:
        assert b["code"] == code, b
    return b


def bash(d, sid, command, token=ALICE, prefix="", **kw):
    return ok(d, "/bash", {"command": command, "session_id": sid, **kw}, token, prefix)


def execute(d, sid, code, token=ALICE, prefix="", **kw):
    return ok(d, "/execute", {"code": code, "session_id": sid, **kw}, token, prefix)


# ---- running code --------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", PREFIXES)
def test_execute_and_bash_share_a_session(d, prefix):
    sid = new_sid()
    b = execute(d, sid, "x = 6 * 7\nprint(x)\nopen('state.txt', 'w').write(str(x))",
                prefix=prefix, language="python", tenant_id="alice")
    assert EXEC_KEYS <= set(b), b
    assert b["stdout"] == "42\n" and b["exit_code"] == 0 and b["error"] is None
    assert b["timed_out"] is False and b["artifacts"] == []
    # The same session: the same sandbox, the file still there.
    b2 = bash(d, sid, "cat state.txt; pwd; id -u", prefix=prefix)
    assert b2["sandbox_id"] == b["sandbox_id"]
    assert b2["stdout"] == "42/workspace\n1000\n"
    # Non-root, no network.
    b3 = execute(d, sid, "import os, socket\nprint(os.getuid())\n"
                          "try:\n socket.create_connection(('1.1.1.1', 53), timeout=2)\n"
                          " print('net')\nexcept OSError:\n print('nonet')", prefix=prefix)
    assert b3["stdout"] == "1000\nnonet\n", b3


def test_execute_fields(d):
    sid = new_sid()
    b = execute(d, sid, "import sys, os, helper\nprint(sys.argv[1:], os.environ['GREETING'], "
                        "helper.VALUE)\nprint(open('data/in.txt').read())",
                files={"helper.py": "VALUE = 'imported'\n", "data/in.txt": "payload"},
                environment={"GREETING": "hello"}, arguments=["a b", "--c"], timeout_s=30)
    assert b["exit_code"] == 0, b
    assert b["stdout"] == "['a b', '--c'] hello imported\npayload\n"
    # The list form of files, with bytes.
    b = execute(d, sid, "print(open('bin.dat', 'rb').read())",
                files=[{"path": "bin.dat", "content_b64": base64.b64encode(b"\x00\xff").decode()}])
    assert b["stdout"] == "b'\\x00\\xff'\n"
    # A failing program is a result, not an error.
    b = execute(d, sid, "import sys\nprint('out')\nsys.stderr.write('bad\\n')\nsys.exit(3)")
    assert (b["exit_code"], b["stdout"], b["stderr"], b["error"]) == (3, "out\n", "bad\n", None)
    b = execute(d, sid, "raise ValueError('boom')")
    assert b["exit_code"] == 1 and "ValueError: boom" in b["stderr"]
    # Shell code, with its arguments as $1...
    b = execute(d, sid, 'echo "$1-$2"; read x || echo eof', language="bash", arguments=["p", "q"])
    assert b["stdout"] == "p-q\neof\n", b
    # A signal is an integer exit code too.
    b = bash(d, sid, "kill -9 $$")
    assert b["exit_code"] == 137 and "signal 9" in b["error"]


def test_execute_refusals_are_execute_shaped(d):
    sid = new_sid()
    for body, what in (({"code": "1", "language": "cobol", "session_id": sid}, "Unsupported"),
                       ({"language": "python", "session_id": sid}, "code"),
                       ({"code": "1", "session_id": sid, "timeout_s": -1}, "timeout_s"),
                       ({"code": "1", "session_id": sid, "files": {"../x": "y"}}, "..")):
        b = err(d, "/v1/sandbox/execute", body, status=400, code="S001")
        assert EXEC_KEYS <= set(b) and what in b["error"], b
        assert b["exit_code"] == -1 and b["stdout"] == "" and b["artifacts"] == []
    # Malformed JSON cannot be read for its session_id: in Flujo's shape,
    # with the S-code beside it, as docs/api.md says.
    for prefix in PREFIXES:
        st, b = d.post(prefix + "/execute", raw='{"code": "1", "session_id": "%s", ' % sid,
                       token=ALICE)
        assert st == 400 and b["code"] == "S001" and isinstance(b["error"], str), b
        assert b["exit_code"] == 1 and b["artifacts"] is None and b["truncated"] is False, b
    # Without a session_id, /execute (either prefix) is Flujo's one-shot run.
    for prefix in PREFIXES:
        st, b = post(d, "/execute", {"code": "print(7)", "language": "python"}, prefix=prefix)
        assert st == 200 and b["stdout"] == "7\n" and b["exit_code"] == 0, b
        st, _ = d.get(f"/v1/sandboxes/{b['sandbox_id']}", token=ALICE)
        assert st in (404, 410)         # stopped already: nothing persists


def test_bash_cwd_and_refusals(d):
    sid = new_sid()
    bash(d, sid, "mkdir -p sub/dir")
    assert bash(d, sid, "pwd", cwd="sub/dir")["stdout"] == "/workspace/sub/dir\n"
    assert bash(d, sid, "pwd", cwd="./sub//dir/")["stdout"] == "/workspace/sub/dir\n"
    for cwd in ("/tmp", "../..", "sub/../../x"):
        err(d, "/bash", {"command": "pwd", "session_id": sid, "cwd": cwd}, status=400)
    err(d, "/bash", {"session_id": sid}, code="S001")
    err(d, "/bash", {"command": "", "session_id": sid}, code="S001")
    err(d, "/bash", {"command": "x" * (200 << 10), "session_id": sid}, code="S001")


@pytest.mark.parametrize("route", ["/bash", "/execute"])
def test_timeout_answers_in_time(d, route):
    sid = new_sid()
    t0 = time.time()
    if route == "/bash":
        b = bash(d, sid, "echo started; sleep 30", timeout_s=1.5)
    else:
        b = execute(d, sid, "import time\nprint('started', flush=True)\ntime.sleep(30)",
                    timeout_s=1.5)
    took = time.time() - t0
    assert took < 1.5 + 5, took
    assert b["timed_out"] is True and b["exit_code"] == 124
    assert b["error"] == "Execution timed out" and b["stdout"] == "started\n"
    # The session goes on.
    assert bash(d, sid, "echo again")["stdout"] == "again\n"


def test_staging_many_files_keeps_to_the_timeout(d):
    # /execute's files are staged within its timeout: the answer comes
    # within it (the bound only catches a hang past it, generously), timed
    # out as a run is, with nothing written; or the program's, if staging
    # was fast enough.
    sid = new_sid()
    files = {f"d{i % 50}/f{i}.txt": "x" for i in range(3000)}
    count = "import os\nprint(sum(len(f) for _, _, f in os.walk('.')))\n"
    t0 = time.monotonic()
    b = execute(d, sid, count, files=files, timeout_s=0.5)
    took = time.monotonic() - t0
    assert took < 0.5 + 3, took
    assert set(b) >= EXEC_KEYS and isinstance(b["exit_code"], int), b
    left = ok(d, "/glob", {"session_id": sid, "pattern": "**/*", "include_hidden": True})
    left = [p for p in left["paths"] if p.split("/")[0] != "artifacts"]
    if b["timed_out"]:
        assert b["exit_code"] == 124 and b["error"] == "Execution timed out", b
        assert b["stdout"] == "" and b["artifacts"] == [], b
        # The batch was rolled back: not a file of it, nor a temporary.
        assert left == [], left[:10]
    else:
        assert b["exit_code"] == 0 and b["stdout"] == "3000\n", b
        assert len([p for p in left if "/" in p]) == 3000, len(left)
    # The session goes on.
    assert bash(d, sid, "echo again")["stdout"] == "again\n"


# ---- artifacts ---------------------------------------------------------------------------------


def test_artifacts_are_new_or_changed_only(d):
    sid = new_sid()
    b = bash(d, sid, "echo one > artifacts/keep.txt; mkdir -p artifacts/sub; "
                     "printf '\\x89PNG' > artifacts/sub/plot.png; echo '{}' > artifacts/r.json; "
                     "echo x > not-an-artifact.txt")
    got = {a["path"]: a for a in b["artifacts"]}
    assert set(got) == {"artifacts/keep.txt", "artifacts/sub/plot.png", "artifacts/r.json"}
    assert got["artifacts/sub/plot.png"]["mime_type"] == "image/png"
    assert got["artifacts/sub/plot.png"]["size"] == 4
    assert got["artifacts/r.json"]["mime_type"] == "application/json"
    assert got["artifacts/keep.txt"]["mime_type"] == "text/plain"
    # The url serves the bytes (the sandbox's raw file route, same token).
    st, body = d.get(got["artifacts/keep.txt"]["url"], token=ALICE)
    assert st == 200 and body == "one\n"
    # Nothing changed: nothing reported.
    assert bash(d, sid, "true")["artifacts"] == []
    # One changed in place (same size), one replaced, one new, one removed.
    b = execute(d, sid, "import os\nopen('artifacts/keep.txt', 'w').write('two\\n')\n"
                        "os.replace('artifacts/r.json', 'artifacts/old')\n"
                        "open('artifacts/r.json', 'w').write('{}\\n')\n"
                        "open('artifacts/new.bin', 'wb').write(b'\\x00')\n"
                        "os.remove('artifacts/sub/plot.png')")
    got = {a["path"]: a for a in b["artifacts"]}
    # (old is r.json moved: a path the last listing did not have.)
    assert set(got) == {"artifacts/keep.txt", "artifacts/r.json", "artifacts/new.bin",
                        "artifacts/old"}, got
    assert got["artifacts/new.bin"]["mime_type"] == "application/octet-stream"
    # No artifacts directory at all is no error.
    b = bash(d, sid, "rm -rf artifacts")
    assert b["artifacts"] == [] and b["exit_code"] == 0
    assert bash(d, sid, "mkdir artifacts && echo a > artifacts/a.md")["artifacts"][0]["path"] == \
        "artifacts/a.md"


def test_calls_of_a_session_take_turns(d):
    sid = new_sid()
    bash(d, sid, "true")
    got = {}

    def slow():
        got["slow"] = bash(d, sid, "sleep 3; echo slow", timeout_s=60)

    t = threading.Thread(target=slow)
    t.start()
    time.sleep(0.7)
    # Another session, and the file routes, do not wait for it.
    t0 = time.time()
    bash(d, new_sid(), "true")
    ok(d, "/write", {"path": "side.txt", "content": "x", "session_id": sid})
    assert time.time() - t0 < 2.5
    # A second call of the session waits for the first, so each call's
    # artifacts are its own: the slow call never claims the second's file.
    t0 = time.time()
    second = execute(d, sid, "open('artifacts/second.txt', 'w').write('2')", timeout_s=60)
    t.join(HANG_LIMIT)
    assert time.time() - t0 > 1.5, "it did not wait for the first call"
    assert got["slow"]["stdout"] == "slow\n" and got["slow"]["artifacts"] == [], got["slow"]
    assert [a["path"] for a in second["artifacts"]] == ["artifacts/second.txt"], second

    # The wait counts against the waiting call's timeout: it answers in time.
    t = threading.Thread(target=lambda: bash(d, sid, "sleep 4", timeout_s=60))
    t.start()
    time.sleep(0.7)
    t0 = time.time()
    b = bash(d, sid, "echo never > artifacts/never.txt", timeout_s=1)
    assert time.time() - t0 < 1 + 1.5
    assert b["timed_out"] is True and b["exit_code"] == 124, b
    assert "previous call" in b["error"] and b["stdout"] == "" and b["artifacts"] == []
    t.join(HANG_LIMIT)
    assert bash(d, sid, "ls artifacts")["stdout"] == "second.txt\n"


# ---- files -------------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", PREFIXES)
def test_write_read_grep_glob(d, prefix):
    sid = new_sid()
    app, lib = "import os\n# TODO one\nx = 1\n", b"def f():\n    pass  # todo two\n"
    b = ok(d, "/write", {"path": "src/app.py", "content": app, "session_id": sid}, prefix=prefix)
    assert b == {"path": "src/app.py", "bytes_written": len(app)}
    b = ok(d, "/write", {"path": "./src//lib.py", "content_b64": base64.b64encode(lib).decode(),
                         "session_id": sid}, prefix=prefix)
    assert b == {"path": "src/lib.py", "bytes_written": len(lib)}
    ok(d, "/write", {"path": "notes.txt", "content": "TODO three", "session_id": sid},
       prefix=prefix)
    b = ok(d, "/read", {"path": "src/app.py", "session_id": sid}, prefix=prefix)
    assert b == {"content": "import os\n# TODO one\nx = 1\n", "offset": 0, "limit": 2000,
                 "total_lines": 3, "truncated": False}
    b = ok(d, "/grep", {"pattern": "TODO", "session_id": sid}, prefix=prefix)
    assert b["matches"] == [{"path": "notes.txt", "line": 1, "content": "TODO three"},
                            {"path": "src/app.py", "line": 2, "content": "# TODO one"}]
    assert b["truncated"] is False
    b = ok(d, "/grep", {"pattern": "todo", "ignore_case": True, "include": "*.py",
                        "path": "src", "session_id": sid}, prefix=prefix)
    assert [(m["path"], m["line"]) for m in b["matches"]] == [("src/app.py", 2), ("src/lib.py", 2)]
    b = ok(d, "/grep", {"pattern": "todo", "include": ["lib.*"], "session_id": sid},
           prefix=prefix)
    assert [m["path"] for m in b["matches"]] == ["src/lib.py"]
    b = ok(d, "/glob", {"pattern": "*.py", "session_id": sid}, prefix=prefix)
    assert b["paths"] == ["src/app.py", "src/lib.py"]
    b = ok(d, "/glob", {"pattern": "*", "path": "src", "session_id": sid}, prefix=prefix)
    assert b["paths"] == ["src/app.py", "src/lib.py"]
    b = ok(d, "/read_binary", {"path": "src/lib.py", "session_id": sid}, prefix=prefix)
    assert base64.b64decode(b["content_b64"]) == lib
    assert b["size"] == len(lib) and b["mime_type"] == "text/x-python"
    # Errors of the file operations keep their codes.
    err(d, "/read", {"path": "missing.txt", "session_id": sid}, status=404, code="S211",
        prefix=prefix)
    err(d, "/grep", {"pattern": "(", "session_id": sid}, code="S217", prefix=prefix)
    err(d, "/write", {"path": "src", "content": "x", "session_id": sid}, code="S212",
        prefix=prefix)
    err(d, "/write", {"path": "a", "content": "x", "content_b64": "eA==", "session_id": sid},
        code="S001", prefix=prefix)


def test_read_windows(d):
    sid = new_sid()
    ok(d, "/write", {"path": "lines.txt", "content": "".join(f"line {i}\n" for i in range(10)),
                     "session_id": sid})
    ok(d, "/write", {"path": "nonl.txt", "content": "a\nb", "session_id": sid})
    ok(d, "/write", {"path": "empty.txt", "content": "", "session_id": sid})

    def rd(path, **kw):
        return ok(d, "/read", {"path": path, "session_id": sid, **kw})

    b = rd("lines.txt", offset=2, limit=3)
    assert b == {"content": "line 2\nline 3\nline 4\n", "offset": 2, "limit": 3,
                 "total_lines": 10, "truncated": True}
    b = rd("lines.txt", offset=7, limit=3)
    assert b["content"] == "line 7\nline 8\nline 9\n" and b["truncated"] is False
    b = rd("lines.txt", offset=8, limit=5)
    assert b["content"] == "line 8\nline 9\n" and b["truncated"] is False
    b = rd("lines.txt", offset=50)
    assert b["content"] == "" and b["total_lines"] == 10 and b["truncated"] is False
    b = rd("nonl.txt", offset=1)
    assert (b["content"], b["total_lines"]) == ("b", 2)
    b = rd("empty.txt")
    assert (b["content"], b["total_lines"], b["truncated"]) == ("", 0, False)
    for bad in ({"limit": 0}, {"offset": -1}, {"limit": "5"}, {"limit": 10 ** 9}):
        err(d, "/read", {"path": "lines.txt", "session_id": sid, **bad}, code="S001")
    # A big file: a window of it, and the count, without the whole file in
    # the answer.
    bash(d, sid, "seq 1 2000000 > big.txt")
    b = rd("big.txt", offset=1999998, limit=10)
    assert b == {"content": "1999999\n2000000\n", "offset": 1999998, "limit": 10,
                 "total_lines": 2000000, "truncated": False}
    # One line longer than the cap is cut, and says so.
    bash(d, sid, "head -c 3000000 /dev/zero | tr '\\0' x > long.txt")
    b = rd("long.txt")
    assert len(b["content"]) == 1 << 20 and b["truncated"] is True and b["total_lines"] == 1
    # Binary files are read_binary's.
    bash(d, sid, "printf 'a\\0b' > bin.dat")
    assert "read_binary" in err(d, "/read", {"path": "bin.dat", "session_id": sid},
                                code="S212")["error"]
    assert base64.b64decode(ok(d, "/read_binary", {"path": "bin.dat", "session_id": sid})
                            ["content_b64"]) == b"a\0b"
    bash(d, sid, "head -c 17000000 /dev/zero > huge.bin")
    b = err(d, "/read_binary", {"path": "huge.bin", "session_id": sid}, status=413, code="S400")
    assert "/files/workspace/huge.bin" in b["error"]


@pytest.mark.parametrize("path", ["/etc/passwd", "../etc/passwd", "a/../../etc/passwd", "..",
                                  "/workspace/x", ".", "", "./"])
def test_hostile_paths_are_refused(d, path):
    sid = "hostile"
    for route, body in (("/read", {"path": path}), ("/read_binary", {"path": path}),
                        ("/write", {"path": path, "content": "x"})):
        b = err(d, route, {"session_id": sid, **body}, status=400, code="S001")
        assert "path" in b["error"], b
    if path not in (".", "", "./"):     # the workspace itself is fine to search
        for route in ("/grep", "/glob"):
            err(d, route, {"session_id": sid, "pattern": "x", "path": path}, status=400,
                code="S001")
    err(d, "/sessions/alice/hostile/copy", {"files": [{"path": path, "content": "x"}]},
        status=400, code="S001")


def test_writes_follow_symlinks_inside_the_workspace(d):
    sid = new_sid()
    bash(d, sid, "mkdir -p real/sub && echo old > real/f.txt && ln -s real link && "
                 "ln -s /workspace/real abs && ln -s sub real/rel && ln -s real/f.txt leaf && "
                 "ln -s missing.txt dangling && ln -s / root && ln -s ../.. up && "
                 "ln -s /tmp tmp && ln -s loop1 loop2 && ln -s loop2 loop1")
    # Through a directory symlink (relative, absolute, one inside another).
    assert ok(d, "/write", {"path": "link/a.txt", "content": "A", "session_id": sid}) == \
        {"path": "link/a.txt", "bytes_written": 1}
    ok(d, f"/sessions/alice/{sid}/copy", {"files": [{"path": "abs/b.txt", "content": "B"},
                                                    {"path": "link/rel/new/d.txt",
                                                     "content": "D"}]})
    b = execute(d, sid, "print(open('real/c.txt').read())", files={"link/c.txt": "C"})
    assert b["stdout"] == "C\n", b
    # A last component that is a symlink: its target is written, the
    # link stays; a dangling one makes its target.
    ok(d, "/write", {"path": "leaf", "content": "new", "session_id": sid})
    ok(d, "/write", {"path": "dangling", "content": "made", "session_id": sid})
    out = bash(d, sid, "cat real/a.txt real/b.txt real/sub/new/d.txt real/f.txt missing.txt; "
                       "echo; test -L link && test -L leaf && test -L dangling && echo links")
    assert out["stdout"] == "ABDnewmade\nlinks\n", out
    # Out of the workspace, or round in circles: refused, and nothing of
    # the batch is written.
    for path in ("root/etc/evil", "up/evil", "tmp/evil", "loop1/evil"):
        b = err(d, "/write", {"path": path, "content": "x", "session_id": sid}, status=400,
                code="S210")
        assert "symlink" in b["error"], b
    b = err(d, f"/sessions/alice/{sid}/copy",
            {"files": [{"path": "link/batch.txt", "content": "x"},
                       {"path": "tmp/evil", "content": "x"}]}, status=400, code="S210")
    assert "outside /workspace" in b["error"], b
    b = err(d, "/v1/sandbox/execute", {"code": "print(1)", "session_id": sid,
                                       "files": {"up/evil": "x"}}, status=400, code="S210")
    assert b["exit_code"] == -1
    assert bash(d, sid, "ls real; ls /tmp; find / -xdev -name evil 2>/dev/null")["stdout"] == \
        "a.txt\nb.txt\nc.txt\nf.txt\nrel\nsub\n", "nothing else written"
    # The native archive upload keeps refusing any symlink in a path.
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        ti = tarfile.TarInfo("link/native.txt")
        ti.size = 1
        t.addfile(ti, io.BytesIO(b"n"))
    st, body = d.request("PUT", f"/v1/sandboxes/{out['sandbox_id']}/archive/workspace",
                         token=ALICE, raw=buf.getvalue())
    assert st == 400 and "symlink" in json.dumps(body), (st, body)


def test_symlinks_stay_in_the_sandbox(d):
    sid = new_sid()
    bash(d, sid, "ln -s / root")
    # Followed inside the sandbox, as the sandbox user: what it may read
    # anyway, and nothing more.
    assert "sandbox" in ok(d, "/read", {"path": "root/etc/passwd", "session_id": sid})["content"]
    err(d, "/read", {"path": "root/etc/shadow", "session_id": sid})
    err(d, "/write", {"path": "root/etc/evil", "content": "x", "session_id": sid})


# ---- sessions ----------------------------------------------------------------------------------


def test_sessions_list_delete_and_admin_only(d):
    sid = new_sid()
    sb = bash(d, sid, "echo hi > f")["sandbox_id"]
    for prefix in PREFIXES:
        st, b = d.get(prefix + "/sessions", token=ALICE)
        assert st == 403 and b["code"] == "S006" and isinstance(b["error"], str), b
        st, b = d.delete(f"{prefix}/sessions/alice/{sid}", token=ALICE)
        assert st == 403 and b["code"] == "S006"
        st, b = d.get(prefix + "/sessions", token=ADMIN)
        assert st == 200
        mine = [s for s in b["sessions"] if s["session_id"] == sid]
        assert len(mine) == 1 and set(mine[0]) == {"tenant_id", "session_id", "sandbox_id",
                                                   "created_at", "last_used_at"}
        assert mine[0]["tenant_id"] == "alice" and mine[0]["sandbox_id"] == sb
        assert mine[0]["created_at"] <= mine[0]["last_used_at"]
    st, b = d.get("/sessions?tenant_id=bob", token=ADMIN)
    assert all(s["tenant_id"] == "bob" for s in b["sessions"])
    # No token at all.
    st, b = d.get("/v1/sandbox/sessions")
    assert st == 401 and b["code"] == "S005"
    # Deleting ends the session and its sandbox; the next use starts afresh.
    st, b = d.delete(f"/v1/sandbox/sessions/alice/{sid}", token=ADMIN)
    assert st == 200 and b["deleted"] is True and b["sandbox_id"] == sb
    st, b = d.get(f"/v1/sandboxes/{sb}", token=ALICE)
    assert st in (404, 410)
    st, b = d.delete(f"/sessions/alice/{sid}", token=ADMIN)
    assert st == 404 and isinstance(b["error"], str)
    b = bash(d, sid, "ls f || echo gone")
    assert b["sandbox_id"] != sb and "gone" in b["stdout"]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("token", [None, "tok-nobody-0123456789abcdef"])
def test_auth(d, prefix, token):
    sid = new_sid()
    calls = [("/execute", {"code": "print(1)", "session_id": sid}),
             ("/bash", {"command": "true", "session_id": sid}),
             ("/read", {"path": "a.txt", "session_id": sid}),
             ("/read_binary", {"path": "a.txt", "session_id": sid}),
             ("/write", {"path": "a.txt", "content": "x", "session_id": sid}),
             ("/grep", {"pattern": "x", "session_id": sid}),
             ("/glob", {"pattern": "*", "session_id": sid}),
             (f"/sessions/alice/{sid}/copy", {"files": [{"path": "a.txt", "content": "x"}]})]
    for route, body in calls:
        st, b = d.post(prefix + route, body, token=token)
        assert st == 401, (route, st, b)
        # The gateway's shape: error a string, the S-code beside it.
        assert isinstance(b["error"], str) and b["error"].startswith("unauthorized"), (route, b)
        assert b["code"] == "S005" and b["type"] and "docs_url" in b, (route, b)
        if route == "/execute":
            # Answered before the body is read, so before anyone knows
            # whether it is Flujo's call or the gateway's: the fields of
            # both (Flujo's integer exit_code among them).
            assert isinstance(b["exit_code"], int) and b["timed_out"] is False, b
    st, b = d.get(prefix + "/sessions", token=token)
    assert st == 401 and b["code"] == "S005" and isinstance(b["error"], str)
    st, b = d.delete(f"{prefix}/sessions/alice/{sid}", token=token)
    assert st == 401 and b["code"] == "S005" and isinstance(b["error"], str)
    # Nothing was made.
    st, b = d.get("/sessions", token=ADMIN)
    assert sid not in [s["session_id"] for s in b["sessions"]]


def test_write_over_the_workspace_quota(tmp_path):
    cfg = tmp_path / "cella.yaml"
    cfg.write_text("workspace_quota_bytes: 1M\npool_size: 0\n")
    daemon = Daemon(config=str(cfg)).start()
    try:
        ok(daemon, "/write", {"path": "small.txt", "content": "x" * 1000, "session_id": "q"},
           token=None)
        b = err(daemon, "/write", {"path": "big.bin", "content": "x" * (2 << 20),
                                   "session_id": "q"}, token=None, status=413, code="S400")
        assert "quota" in b["error"], b
        b = err(daemon, "/sessions/default/q/copy",
                {"files": [{"path": "c1.txt", "content": "x"},
                           {"path": "c2.bin", "content": "x" * (2 << 20)}]},
                token=None, status=413, code="S400")
        b = err(daemon, "/execute", {"code": "print(1)", "session_id": "q",
                                     "files": {"f.bin": "x" * (2 << 20)}},
                token=None, status=413, code="S400")
        assert b["exit_code"] == -1
        # Nothing of them was written.
        assert bash(daemon, "q", "ls -A", token=None)["stdout"] == "artifacts\nsmall.txt\n"
    finally:
        daemon.close()


def test_tenants(d):
    sid = new_sid()
    # A non-admin token cannot act for another tenant, in a body or a URL.
    b = err(d, "/bash", {"command": "true", "session_id": sid, "tenant_id": "bob"}, status=403,
            code="S006")
    assert "tenant" in b["error"]
    err(d, "/v1/sandbox/execute", {"code": "1", "session_id": sid, "tenant_id": "bob"},
        status=403, code="S006")
    err(d, f"/sessions/bob/{sid}/copy", {"files": []}, status=403, code="S006")
    # And on every file route: the body's tenant_id is checked before anything is done.
    for route, body in (("/read", {"path": "who"}), ("/read_binary", {"path": "who"}),
                        ("/write", {"path": "who", "content": "x"}),
                        ("/grep", {"pattern": "x"}), ("/glob", {"pattern": "*"})):
        for prefix in PREFIXES:
            err(d, route, {**body, "session_id": sid, "tenant_id": "bob"}, status=403,
                code="S006", prefix=prefix)
    err(d, "/bash", {"command": "true", "session_id": sid, "tenant_id": "b/ad"}, code="S001")
    err(d, "/bash", {"command": "true", "session_id": "no spaces"}, code="S001")
    # The same session id in two tenants is two sessions.
    a = bash(d, sid, "echo alice > who")["sandbox_id"]
    b = bash(d, sid, "cat who || echo none", token=BOB)
    assert b["sandbox_id"] != a and "none" in b["stdout"]
    # An admin acts for any tenant: alice's session, as alice left it.
    b = bash(d, sid, "cat who", token=ADMIN, tenant_id="alice")
    assert b["sandbox_id"] == a and b["stdout"] == "alice\n"
    # Another tenant's sandbox stays invisible on the native routes.
    st, _ = d.get(f"/v1/sandboxes/{a}", token=BOB)
    assert st == 404


def test_an_admin_makes_a_session_for_another_tenant(d):
    sid = new_sid()
    # The session's sandbox is the session's tenant's, not the admin's.
    b = bash(d, sid, "echo first > artifacts/a.txt", token=ADMIN, tenant_id="bob")
    first = b["artifacts"][0]["url"]
    b = bash(d, sid, "echo second > artifacts/b.txt", token=BOB)
    assert [a["path"] for a in b["artifacts"]] == ["artifacts/b.txt"], b
    st, body = d.get(b["artifacts"][0]["url"], token=BOB)
    assert st == 200 and body == "second\n", (st, body)
    st, body = d.get(first, token=BOB)
    assert st == 200 and body == "first\n", (st, body)
    st, listing = d.get("/v1/sandboxes", token=BOB)
    assert b["sandbox_id"] in [x["sandbox_id"] for x in listing["sandboxes"]]
    # Still nobody else's.
    st, _ = d.get(b["artifacts"][0]["url"], token=ALICE)
    assert st == 404


def test_copy_is_all_or_nothing(d):
    sid = new_sid()
    for prefix in PREFIXES:
        b = ok(d, f"/sessions/alice/{sid}/copy",
               {"files": [{"path": f"in{prefix.replace('/', '_')}/a.txt", "content": "A"},
                          {"path": "b.bin", "content_b64": base64.b64encode(b"\x01").decode()}]},
               prefix=prefix)
        assert b == {"written": 2}
    assert bash(d, sid, "cat in/a.txt in_v1_sandbox/a.txt")["stdout"] == "AA"
    bash(d, sid, "mkdir -p taken/dir")
    bad_batches = [
        [{"path": "c1.txt", "content": "x"}, {"path": "../c2.txt", "content": "x"}],
        [{"path": "c1.txt", "content": "x"}, {"path": "c2.txt", "content_b64": "!!"}],
        [{"path": "c1.txt", "content": "x"}, {"path": "c2.txt"}],
        [{"path": "c1.txt", "content": "x"}, {"path": "c1.txt", "content": "y"}],
        [{"path": "c1.txt", "content": "x"}, {"path": "c2.txt", "content": 5}],
        # Refused only by the sandbox, once c1 is already written beside its
        # place: a directory stands where c2 goes.
        [{"path": "c1.txt", "content": "x"}, {"path": "new/deep/c3.txt", "content": "x"},
         {"path": "taken/dir", "content": "x"}],
        # A file in the way of a parent directory.
        [{"path": "c1.txt", "content": "x"}, {"path": "b.bin/c2.txt", "content": "x"}],
        # Two of the batch's own that cannot both be.
        [{"path": "c1.txt", "content": "x"}, {"path": "p", "content": "x"},
         {"path": "p/q", "content": "y"}],
    ]
    for files in bad_batches:
        st, b = post(d, f"/sessions/alice/{sid}/copy", {"files": files})
        assert st >= 400 and isinstance(b["error"], str), (files, st, b)
        out = bash(d, sid, "ls -A; ls -A taken")["stdout"].split()
        assert "c1.txt" not in out and "new" not in out and "p" not in out, (files, out)
        assert not [n for n in out if n.startswith(".cella")], out
    err(d, f"/sessions/alice/{sid}/copy", {"files": {"a": "b"}}, code="S001")
    err(d, f"/sessions/alice/{sid}/copy", {}, code="S001")
    assert ok(d, f"/sessions/alice/{sid}/copy", {"files": []}) == {"written": 0}


def test_concurrent_first_use_makes_one_session(d):
    sid = new_sid()
    got = []

    def one():
        got.append(bash(d, sid, "echo hi")["sandbox_id"])

    ts = [threading.Thread(target=one) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(HANG_LIMIT)
    assert len(got) == 4 and len(set(got)) == 1, got


def test_unknown_route_and_method(d):
    st, b = d.get("/v1/sandbox/bash", token=ALICE)
    assert st == 405
    st, b = d.post("/read", raw="{not json", token=ALICE)
    assert st == 400 and b["code"] == "S001" and isinstance(b["error"], str)


def test_metrics_name_each_prefix(d):
    bash(d, "metrics", "true")
    bash(d, "metrics", "true", prefix="/v1/sandbox")
    st, text = d.get("/metrics", token=ADMIN)
    lines = [l for l in text.splitlines() if l.startswith("cella_http_requests_total")]
    series = [l.rsplit(" ", 1)[0] for l in lines]
    assert len(series) == len(set(series)), "a series twice: Prometheus refuses the scrape"
    assert any('route="/bash"' in l for l in lines)
    assert any('route="/v1/sandbox/bash"' in l for l in lines)


# ---- the cap, a restart, idle cleanup --------------------------------------------------------


def test_the_session_cap(tmp_path):
    # Sessions have a cap of their own, apart from max_concurrent_sandboxes:
    # neither takes the other's places.
    cfg = tmp_path / "cella.yaml"
    cfg.write_text("gateway_max_sessions: 4\nmax_concurrent_sandboxes: 2\npool_size: 0\n")
    daemon = Daemon(config=str(cfg)).start()
    try:
        ids = [bash(daemon, f"cap{i}", "true", token=None)["sandbox_id"] for i in range(4)]
        st, b = daemon.post("/bash", {"command": "true", "session_id": "cap4"})
        assert st == 429 and b["code"] == "S400" and "gateway_max_sessions is 4" in b["error"], b
        assert "max_concurrent_sandboxes" not in b["error"]
        assert b["exit_code"] == -1 and b["sandbox_id"] is None
        # Other sandboxes have theirs, whole, and never take a session's.
        natives = [daemon.create("shell") for _ in range(2)]
        st, b = daemon.post("/v1/sandboxes", {"image": "shell"})
        assert st == 429 and "max_concurrent_sandboxes" in b["error"]["message"], b
        # Existing sessions go on; a deleted one frees its place.
        assert bash(daemon, "cap1", "true", token=None)["sandbox_id"] == ids[1]
        st, _ = daemon.delete("/sessions/default/cap0")
        assert st == 200
        bash(daemon, "cap4", "true", token=None)
        # A sandbox stopped behind the session's back frees it too.
        st, _ = daemon.delete(f"/v1/sandboxes/{ids[2]}?wait=true")
        assert st == 200
        st, b = daemon.get("/sessions")
        assert {s["session_id"] for s in b["sessions"]} == {"cap1", "cap3", "cap4"}
        bash(daemon, "cap5", "true", token=None)
        # Stopping a native sandbox frees a native place, not a session's.
        st, _ = daemon.delete(f"/v1/sandboxes/{natives[0]}?wait=true")
        assert st == 200
        st, b = daemon.post("/bash", {"command": "true", "session_id": "cap6"})
        assert st == 429 and "gateway_max_sessions" in b["error"], b
        daemon.create("shell")
    finally:
        daemon.close()


def test_the_session_cap_survives_a_restart(tmp_path):
    # Which cap a sandbox counts against is kept with it.
    cfg = tmp_path / "cella.yaml"
    cfg.write_text("gateway_max_sessions: 2\nmax_concurrent_sandboxes: 1\npool_size: 0\n")
    daemon = Daemon(config=str(cfg)).start()
    try:
        for i in range(2):
            bash(daemon, f"r{i}", "true", token=None)
        daemon.create("shell")
        assert daemon.stop() == 0
        daemon.start()
        st, b = daemon.post("/bash", {"command": "true", "session_id": "r2"})
        assert st == 429 and "gateway_max_sessions" in b["error"], b
        st, b = daemon.post("/v1/sandboxes", {"image": "shell"})
        assert st == 429 and "max_concurrent_sandboxes" in b["error"]["message"], b
        bash(daemon, "r1", "true", token=None)
    finally:
        daemon.close()


def iso_secs(t):
    from datetime import datetime
    return datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def test_a_restart_keeps_sessions(tmp_path):
    daemon = Daemon(tokens=tokens_file(tmp_path)).start()
    try:
        b = execute(daemon, "keep", "open('kept.txt', 'w').write('still here')")
        sb = b["sandbox_id"]
        st, before = daemon.get("/sessions", token=ADMIN)
        time.sleep(1.5)
        assert daemon.stop() == 0
        restarted = time.time()
        daemon.start()
        # The last use survives the restart (the idle clock starts again).
        st, after = daemon.get("/sessions", token=ADMIN)
        used = after["sessions"][0]["last_used_at"]
        assert abs(iso_secs(used) - iso_secs(before["sessions"][0]["last_used_at"])) < 0.1, \
            (before, after)
        assert iso_secs(used) < restarted - 1
        st, info = daemon.get(f"/v1/sandboxes/{sb}", token=ALICE)
        assert info["last_used_at"] == used
        b = bash(daemon, "keep", "cat kept.txt")
        assert b["sandbox_id"] == sb and b["stdout"] == "still here"
        st, b = daemon.get("/sessions", token=ADMIN)
        assert [(s["tenant_id"], s["session_id"], s["sandbox_id"]) for s in b["sessions"]] == \
            [("alice", "keep", sb)]
        assert iso_secs(b["sessions"][0]["last_used_at"]) >= restarted - 0.5
    finally:
        daemon.close()


def test_idle_cleanup_ends_the_session(tmp_path):
    cfg = tmp_path / "cella.yaml"
    cfg.write_text("gateway_idle_timeout_secs: 1\npool_size: 0\n")
    daemon = Daemon(config=str(cfg), env={"CELLA_REAP_INTERVAL_MS": "200"}).start()
    try:
        b = bash(daemon, "idle", "echo x > f", token=None)
        sb = b["sandbox_id"]
        st, info = daemon.get(f"/v1/sandboxes/{sb}")
        assert info["idle_timeout_secs"] == 1 and info["memory_mb"] == 512
        # Reaped: the session is gone from the list.
        wait_until(lambda: daemon.get("/sessions")[1]["sessions"] == [], limit=30)
        # The next use starts a new one, with an empty workspace.
        b = bash(daemon, "idle", "ls f || echo empty", token=None)
        assert b["sandbox_id"] != sb and "empty" in b["stdout"]
    finally:
        daemon.close()


def test_a_client_gone_mid_execute_kills_the_programs_children(d):
    """A session outlives its calls, so when an /execute's client hangs up,
    the program must go with its whole process group: a child it started
    must not live on in the session."""
    sid = new_sid()
    bash(d, sid, "true")                      # the session exists
    body = json.dumps({"code": "import subprocess, time\n"
                               "subprocess.Popen(['sleep', '61.3'])\n"
                               "print('started', flush=True)\ntime.sleep(60)\n",
                       "session_id": sid}).encode()
    c = http.client.HTTPConnection(d.host, d.port, timeout=HANG_LIMIT)
    c.request("POST", "/execute", body, {"Authorization": f"Bearer {ALICE}",
                                         "Content-Type": "application/json"})
    # Seen from the host (a session runs one call at a time, so not from
    # inside while the call runs); the odd duration names this test's child.
    def children():
        return subprocess.run(["pgrep", "-f", "sleep 61[.]3"], capture_output=True,
                              text=True).stdout.split()
    wait_until(lambda: len(children()) == 1, limit=30)
    c.sock.shutdown(2)
    c.close()
    wait_until(lambda: not children(), limit=30)
    assert bash(d, sid, "echo ok")["stdout"] == "ok\n"      # the session goes on
