"""The iii dialect end to end: POST /v1/trigger {function_id, payload} for
every sandbox::* function, with iii's exact result shapes and its bare error
objects (iii-sandbox.md and BEHAVIOUR-NOTES §2)."""
import base64
import os
import time

import pytest

from daemon import Daemon, tokens_file

ERROR_KEYS = {"type", "code", "message", "docs_url", "retryable", "fix", "fix_note"}


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    tokens = tokens_file(tmp_path_factory.mktemp("iii"), {A: "alice", B: "bob"})
    daemon = Daemon(tokens=tokens).start()
    yield daemon
    daemon.close()


A = "tok-alice-0123456789abcdef"
B = "tok-bob-0123456789abcdefgh"


def trig(d, fid, payload=None, token=A, **extra):
    body = {"function_id": fid, **extra}
    if payload is not None:
        body["payload"] = payload
    return d.post("/v1/trigger", body, token=token)


def ok(d, fid, payload=None, token=A):
    st, b = trig(d, fid, payload, token)
    assert st == 200, (fid, st, b)
    return b


def err(d, fid, payload=None, token=A, code=None, status=None):
    st, b = trig(d, fid, payload, token)
    assert st >= 400 and set(b) == ERROR_KEYS, (fid, st, b)
    if code:
        assert b["code"] == code, b
    if status:
        assert st == status, (st, b)
    return b


@pytest.fixture
def sid(d):
    s = ok(d, "sandbox::create", {"image": "shell"})["sandbox_id"]
    yield s
    trig(d, "sandbox::stop", {"sandbox_id": s})


def test_create_list_stop(d):
    b = ok(d, "sandbox::create", {"image": "python", "name": "iii-one", "env": {"A": "1"},
                                  "cpus": 1, "memory_mb": 256, "idle_timeout_secs": 60})
    assert set(b) == {"sandbox_id", "image"} and b["image"] == "python"
    s = b["sandbox_id"]
    lst = ok(d, "sandbox::list", {})["sandboxes"]
    mine = [x for x in lst if x["sandbox_id"] == s]
    assert len(mine) == 1
    assert set(mine[0]) == {"sandbox_id", "name", "image", "age_secs", "exec_in_progress",
                            "exec_in_flight", "exec_slots_free", "stopped"}
    assert mine[0]["name"] == "iii-one" and mine[0]["exec_slots_free"] == 4
    # Another tenant sees nothing of it.
    assert all(x["sandbox_id"] != s for x in ok(d, "sandbox::list", {}, token=B)["sandboxes"])
    err(d, "sandbox::stop", {"sandbox_id": s}, token=B, code="S002", status=404)
    assert ok(d, "sandbox::stop", {"sandbox_id": s, "wait": True}) == {"sandbox_id": s, "stopped": True}
    err(d, "sandbox::stop", {"sandbox_id": s}, code="S002")
    err(d, "sandbox::exec", {"sandbox_id": s, "cmd": "true"}, code="S002")


def test_create_errors(d):
    b = err(d, "sandbox::create", {"image": "nope"}, code="S100")
    assert "python" in b["message"]
    err(d, "sandbox::create", {}, code="S001")
    err(d, "sandbox::create", {"image": "python", "cpus": "two"}, code="S001")
    err(d, "sandbox::create", {"image": "python", "env": {"1BAD": "x"}}, code="S001")
    err(d, "sandbox::create", {"image": "python", "bogus": 1}, code="S001")


def test_exec_shapes_and_timeout(d, sid):
    b = ok(d, "sandbox::exec", {"sandbox_id": sid, "cmd": "echo hi there"})
    assert b == {"stdout": "hi there\n", "stderr": "", "exit_code": 0, "timed_out": False,
                 "duration_ms": b["duration_ms"], "success": True}
    b = ok(d, "sandbox::exec", {"sandbox_id": sid, "cmd": "sh", "args": ["-c", "exit 3"]})
    assert b["exit_code"] == 3 and b["success"] is False
    b = ok(d, "sandbox::exec", {"sandbox_id": sid, "argv": ["cat"],
                                "stdin": base64.b64encode(b"in").decode()})
    assert b["stdout"] == "in"
    b = ok(d, "sandbox::exec", {"sandbox_id": sid, "cmd": "nosuchprogram"})
    assert b["exit_code"] == 127 and "not found" in b["stderr"]
    t0 = time.time()
    e = err(d, "sandbox::exec", {"sandbox_id": sid, "cmd": "sleep", "args": ["30"],
                                 "timeout_ms": 300}, code="S200", status=408)
    assert e["message"] == "exec timed out after 300 ms" and e["type"] == "execution"
    assert time.time() - t0 < 20
    err(d, "sandbox::exec", {"sandbox_id": sid, "cmd": "a b", "args": ["c"]}, code="S001")
    err(d, "sandbox::exec", {"sandbox_id": sid, "cmd": "echo 'unbalanced quote"}, code="S001")
    err(d, "sandbox::exec", {"cmd": "true"}, code="S001")
    err(d, "sandbox::exec", {"sandbox_id": "not-a-uuid", "cmd": "true"}, code="S001")


def test_run(d):
    b = ok(d, "sandbox::run", {"image": "python", "lang": "python", "code": "print(6*7)"})
    assert b["stdout"] == "42\n" and b["sandbox_id"] is None and b["success"] is True
    assert set(b) == {"stdout", "stderr", "exit_code", "timed_out", "duration_ms", "success",
                      "sandbox_id"}
    b = ok(d, "sandbox::run", {"image": "shell", "lang": "shell", "code": "cat /workspace/f",
                               "files": [{"path": "/workspace/f", "content": "data"}],
                               "keep_sandbox": True})
    assert b["stdout"] == "data" and b["sandbox_id"]
    ok(d, "sandbox::stop", {"sandbox_id": b["sandbox_id"]})
    e = err(d, "sandbox::run", {"image": "shell", "lang": "shell", "code": "sleep 30",
                                "timeout_ms": 300}, code="S200")
    assert e["fix"]["context"] == "during sandbox::run step `exec`" and e["fix"]["inner_code"] == "S200"
    e = err(d, "sandbox::run", {"image": "nope", "lang": "python", "code": "1"}, code="S100")
    assert e["fix"] == {"context": "during sandbox::run step `create`", "sandbox_id": "",
                        "inner_code": "S100"}
    err(d, "sandbox::run", {"image": "python", "code": "1"}, code="S001")


def test_catalog(d):
    imgs = ok(d, "sandbox::catalog::list", {})["images"]
    assert [i["name"] for i in imgs][:3] == ["python", "node", "shell"]
    assert all(set(i) == {"name", "kind", "oci_ref"} for i in imgs)
    assert ok(d, "sandbox::catalog::list")["images"] == imgs       # payload may be absent


def test_fs_functions(d, sid):
    e = err(d, "sandbox::fs::write", {"sandbox_id": sid, "path": "/workspace/a/b.txt",
                                      "content": "x"}, code="S211")
    assert e["fix"] == {"parents": True}
    assert ok(d, "sandbox::fs::write", {"sandbox_id": sid, "path": "/workspace/a/b.txt",
                                        "content": "hello TODO\n", "parents": True}) == {
        "bytes_written": 11, "path": "/workspace/a/b.txt"}
    r = ok(d, "sandbox::fs::read", {"sandbox_id": sid, "path": "/workspace/a/b.txt"})
    assert r["body"] == "hello TODO\n" and r["size"] == 11
    st, _ = d.get(r["content"]["url"], token=A)
    assert st == 200
    assert ok(d, "sandbox::fs::ls", {"sandbox_id": sid, "path": "/workspace/a"})["entries"][0]["name"] == "b.txt"
    assert ok(d, "sandbox::fs::stat", {"sandbox_id": sid, "path": "/workspace/a"})["is_dir"]
    assert ok(d, "sandbox::fs::mkdir", {"sandbox_id": sid, "path": "/workspace/d"}) == {"created": True}
    g = ok(d, "sandbox::fs::grep", {"sandbox_id": sid, "path": "/workspace", "pattern": "TODO"})
    assert g["matches"] == [{"path": "/workspace/a/b.txt", "line": 1, "content": "hello TODO"}]
    s = ok(d, "sandbox::fs::sed", {"sandbox_id": sid, "path": "/workspace/a", "pattern": "TODO",
                                   "replacement": "DONE"})
    assert s["total_replacements"] == 1
    assert ok(d, "sandbox::fs::chmod", {"sandbox_id": sid, "path": "/workspace/a/b.txt",
                                        "mode": "0600"}) == {"updated": 1}
    assert ok(d, "sandbox::fs::mv", {"sandbox_id": sid, "src": "/workspace/a/b.txt",
                                     "dst": "/workspace/c.txt"}) == {"moved": True}
    assert ok(d, "sandbox::fs::rm", {"sandbox_id": sid, "path": "/workspace/a"}) == {"removed": True}
    assert ok(d, "sandbox::fs::glob", {"sandbox_id": sid, "path": "/workspace", "pattern": "*.txt"})[
        "paths"] == ["/workspace/c.txt"]
    err(d, "sandbox::fs::ls", {"sandbox_id": sid, "path": "/nope"}, code="S211")
    ok(d, "sandbox::fs::write", {"sandbox_id": sid, "path": "/workspace/e/f", "content": "", "parents": True})
    err(d, "sandbox::fs::rm", {"sandbox_id": sid, "path": "/workspace/e"}, code="S214")
    err(d, "sandbox::fs::grep", {"sandbox_id": sid, "path": "/workspace", "pattern": "("},
        code="S217")
    err(d, "sandbox::fs::ls", {"path": "/workspace"}, code="S001")
    err(d, "sandbox::fs::ls", {"sandbox_id": sid, "path": "/", "extra": 1}, code="S001")
    err(d, "sandbox::fs::ls", {"sandbox_id": sid, "path": "/"}, token=B, code="S002")


def test_envelope_errors(d):
    st, b = d.request("POST", "/v1/trigger", raw="{nope", token=A)
    assert st == 400 and set(b) == ERROR_KEYS and b["code"] == "S001"
    st, b = d.request("POST", "/v1/trigger", raw='{"payload": {}}', token=A)
    assert st == 400 and b["code"] == "S001" and "function_id" in b["message"]
    st, b = d.request("POST", "/v1/trigger", raw='{"function_id": "sandbox::list", "payload": []}',
                      token=A)
    assert st == 400 and b["code"] == "S001"
    err(d, "sandbox::nope", {}, code="S001", status=404)
    st, b = trig(d, "sandbox::list", {}, timeoutMs=5000)
    assert st == 200
    # Authentication failures come in iii's shape too.
    st, b = d.post("/v1/trigger", {"function_id": "sandbox::list"})
    assert st == 401 and set(b) == ERROR_KEYS and b["code"] == "S005"
    st, b = d.post("/v1/trigger", {"function_id": "sandbox::list"}, token="wrong-token-0123456789")
    assert st == 401 and b["code"] == "S005"


# ---- the envelope as iii's SDKs and docs send it --------------------------------

def test_envelope_aliases(d):
    # Python's SDK puts its client-side bound in timeout_ms; iii's Agent
    # Quickstart names the function "trigger".
    st, b = trig(d, "sandbox::list", {}, timeout_ms=300000)
    assert st == 200 and "sandboxes" in b
    st, b = d.post("/v1/trigger", {"trigger": "sandbox::catalog::list", "payload": {}}, token=A)
    assert st == 200 and b["images"]
    st, b = d.post("/v1/trigger", {"trigger": "sandbox::list", "function_id": "sandbox::stop"},
                   token=A)
    assert st == 400 and b["code"] == "S001" and "trigger" in b["message"]
    st, b = d.post("/v1/trigger", {"trigger": "sandbox::list", "function_id": "sandbox::list"},
                   token=A)
    assert st == 200
    # A wrong method on the route still answers in iii's shape.
    st, b = d.get("/v1/trigger", token=A)
    assert st == 405 and set(b) == ERROR_KEYS and b["code"] == "S001"


def test_any_wellformed_uuid_is_not_found(d, sid):
    # iii parses any UUID: one that names no sandbox is S002, not S001.
    for other in ("ddb3cf83-3af9-4c0d-9598-f10d5a5d51ab", "00000000-0000-0000-0000-000000000000"):
        e = err(d, "sandbox::exec", {"sandbox_id": other, "cmd": "true"}, code="S002",
                status=404)
        assert e["message"] == f"sandbox not found: {other}"
        err(d, "sandbox::fs::ls", {"sandbox_id": other, "path": "/"}, code="S002")
        err(d, "sandbox::stop", {"sandbox_id": other}, code="S002")
    # Upper case is the same UUID.
    assert ok(d, "sandbox::exec", {"sandbox_id": sid.upper(), "cmd": "true"})["success"]
    for bad in ("not-a-uuid", sid + "0", sid.replace("-", ""), "g" + sid[1:]):
        err(d, "sandbox::exec", {"sandbox_id": bad, "cmd": "true"}, code="S001", status=400)


# ---- exec ---------------------------------------------------------------------

def test_exec_env_workdir_and_126(d, sid):
    b = ok(d, "sandbox::exec", {"sandbox_id": sid, "argv": ["sh", "-c", 'echo "$A $B"; pwd'],
                                "env": ["A=1", "B=two words"], "workdir": "/tmp"})
    assert b["stdout"] == "1 two words\n/tmp\n"
    b = ok(d, "sandbox::exec", {"sandbox_id": sid, "cmd": "sh", "args": ["-c", 'echo "$Z"'],
                                "env": {"Z": "map"}})
    assert b["stdout"] == "map\n"
    e = err(d, "sandbox::exec", {"sandbox_id": sid, "cmd": "true", "env": {"1X": "a", "A-B": "b"}},
            code="S001")
    assert e["message"] == 'invalid request: env contains invalid variable name(s): ["1X", "A-B"]'
    b = ok(d, "sandbox::exec", {"sandbox_id": sid, "cmd": "/etc/passwd"})
    assert b["exit_code"] == 126 and b["success"] is False
    # A program reopening its own stdio works (they are the sandbox user's).
    b = ok(d, "sandbox::exec", {"sandbox_id": sid, "argv": ["sh", "-c",
                                "cat /dev/stdin; echo err > /dev/stderr"],
                                "stdin": base64.b64encode(b"piped").decode()})
    assert b["stdout"] == "piped" and b["stderr"] == "err\n"


def test_exec_cap_is_s003_while_files_still_work(d, sid):
    import threading
    started = []

    def sleeper():
        started.append(trig(d, "sandbox::exec", {"sandbox_id": sid, "cmd": "sleep 3"}))

    ts = [threading.Thread(target=sleeper) for _ in range(4)]
    for t in ts:
        t.start()
    deadline = time.time() + 60
    while time.time() < deadline:
        lst = ok(d, "sandbox::list", {})["sandboxes"]
        if [x for x in lst if x["sandbox_id"] == sid][0]["exec_in_flight"] == 4:
            break
        time.sleep(0.05)
    e = err(d, "sandbox::exec", {"sandbox_id": sid, "cmd": "true"}, code="S003", status=429)
    assert e["message"] == f"sandbox {sid} is at its exec concurrency cap"
    assert "nohup" in e["fix_note"]
    # File operations may run while execs are in flight.
    assert ok(d, "sandbox::fs::stat", {"sandbox_id": sid, "path": "/workspace"})["is_dir"]
    for t in ts:
        t.join(60)
    assert all(st == 200 and b["success"] for st, b in started)


# ---- run ------------------------------------------------------------------------

@pytest.mark.parametrize("lang,code,want", [
    ("js", "console.log(1+1)", "2\n"),
    ("javascript", "console.log(2+1)", "3\n"),
    ("py", "print(2*2)", "4\n"),
    ("sh", "echo five", "five\n"),
    ("bash", "echo six", "six\n"),
    ("/usr/bin/python3", "print('interp')", "interp\n"),
])
def test_run_languages(d, lang, code, want):
    b = ok(d, "sandbox::run", {"image": "python", "lang": lang, "code": code})
    assert b["stdout"] == want and b["success"], b


def test_run_stdin_env_and_step_fixes(d):
    before = {x["sandbox_id"] for x in ok(d, "sandbox::list", {})["sandboxes"]}
    b = ok(d, "sandbox::run", {"image": "python", "lang": "python",
                               "code": "import os,sys; print(sys.stdin.read(), os.environ['K'])",
                               "stdin": base64.b64encode(b"in").decode(), "env": {"K": "v"}})
    assert b["stdout"] == "in v\n"
    # The timeout's fix names the run's sandbox, though it was stopped.
    e = err(d, "sandbox::run", {"image": "shell", "lang": "shell", "code": "sleep 30",
                                "timeout_ms": 300}, code="S200", status=408)
    assert len(e["fix"]["sandbox_id"]) == 36
    assert e["message"] == "exec timed out after 300 ms"
    # A file that cannot be written fails the write step, with its own code.
    e = err(d, "sandbox::run", {"image": "shell", "lang": "shell", "code": "true",
                                "files": [{"path": "/usr/x", "content": "no"}]})
    assert e["fix"]["context"] == "during sandbox::run step `write`"
    assert e["fix"]["inner_code"] == e["code"] and len(e["fix"]["sandbox_id"]) == 36
    # The env is checked in the create step, as iii does.
    e = err(d, "sandbox::run", {"image": "shell", "lang": "shell", "code": "true",
                                "env": {"1X": "a"}}, code="S001")
    assert e["fix"] == {"context": "during sandbox::run step `create`", "sandbox_id": "",
                        "inner_code": "S001"}
    # No sandbox of these runs is left behind, failed or not.
    assert {x["sandbox_id"] for x in ok(d, "sandbox::list", {})["sandboxes"]} == before


# ---- files through the trigger ---------------------------------------------------

def test_fs_write_read_variants(d, sid):
    P = "/workspace/w.bin"
    b = ok(d, "sandbox::fs::write", {"sandbox_id": sid, "path": P,
                                     "content_b64": base64.b64encode(b"\x00\xffbin").decode()})
    assert b == {"bytes_written": 5, "path": P}
    r = ok(d, "sandbox::fs::read", {"sandbox_id": sid, "path": P})
    assert "body" not in r and r["size"] == 5 and r["mode"] == "0644"
    st, raw = d.get(r["content"]["url"], token=A)
    assert st == 200
    err(d, "sandbox::fs::write", {"sandbox_id": sid, "path": P, "content_b64": "%%%"},
        code="S001")
    err(d, "sandbox::fs::write", {"sandbox_id": sid, "path": P, "content": "a",
                                  "content_b64": "YQ=="}, code="S001")
    err(d, "sandbox::fs::write", {"sandbox_id": sid, "path": P}, code="S001")
    ok(d, "sandbox::fs::write", {"sandbox_id": sid, "path": P, "content": "x", "mode": "0600"})
    assert ok(d, "sandbox::fs::stat", {"sandbox_id": sid, "path": P})["mode"] == "0600"
    err(d, "sandbox::fs::read", {"sandbox_id": sid, "path": "/workspace"}, code="S212")
    err(d, "sandbox::fs::read", {"sandbox_id": sid, "path": "/workspace/none"}, code="S211")


def test_fs_mkdir_mv_chmod_errors(d, sid):
    W = "/workspace/m"
    assert ok(d, "sandbox::fs::mkdir", {"sandbox_id": sid, "path": W + "/a/b",
                                        "parents": True}) == {"created": True}
    assert ok(d, "sandbox::fs::mkdir", {"sandbox_id": sid, "path": W + "/a/b",
                                        "parents": True}) == {"created": False}
    err(d, "sandbox::fs::mkdir", {"sandbox_id": sid, "path": W + "/a/b"}, code="S213")
    err(d, "sandbox::fs::mkdir", {"sandbox_id": sid, "path": W + "/x/y"}, code="S211")
    err(d, "sandbox::fs::mkdir", {"sandbox_id": sid, "path": W + "/c", "mode": "0999"},
        code="S210")
    for n in ("f1", "f2"):
        ok(d, "sandbox::fs::write", {"sandbox_id": sid, "path": f"{W}/a/{n}", "content": n})
    err(d, "sandbox::fs::mv", {"sandbox_id": sid, "src": W + "/a/f1", "dst": W + "/a/f2"},
        code="S213")
    err(d, "sandbox::fs::mv", {"sandbox_id": sid, "src": W + "/none", "dst": W + "/z"},
        code="S211")
    assert ok(d, "sandbox::fs::mv", {"sandbox_id": sid, "src": W + "/a/f1", "dst": W + "/a/f2",
                                     "overwrite": True}) == {"moved": True}
    assert ok(d, "sandbox::fs::read", {"sandbox_id": sid, "path": W + "/a/f2"})["body"] == "f1"
    # a, a/b, a/f2: the root counts.
    assert ok(d, "sandbox::fs::chmod", {"sandbox_id": sid, "path": W + "/a", "mode": "0750",
                                        "recursive": True}) == {"updated": 3}


def test_fs_grep_and_sed_options(d, sid):
    W = "/workspace/g"
    ok(d, "sandbox::fs::write", {"sandbox_id": sid, "path": W + "/one.py", "parents": True,
                                 "content": "x = 1\nX = 2\nlong " + "é" * 3000 + "\n"})
    ok(d, "sandbox::fs::write", {"sandbox_id": sid, "path": W + "/two.txt", "content": "x\n"})
    g = ok(d, "sandbox::fs::grep", {"sandbox_id": sid, "path": W, "pattern": "x",
                                    "ignore_case": True, "include_glob": ["*.py"]})
    assert [m["line"] for m in g["matches"]] == [1, 2] and g["truncated"] is False
    g = ok(d, "sandbox::fs::grep", {"sandbox_id": sid, "path": W, "pattern": "x",
                                    "max_matches": 1})
    assert len(g["matches"]) == 1 and g["truncated"] is True
    g = ok(d, "sandbox::fs::grep", {"sandbox_id": sid, "path": W, "pattern": "^long",
                                    "max_line_bytes": 100})
    c = g["matches"][0]["content"]
    assert c.endswith("…") and len(c.encode()) <= 100 + len("…".encode())
    err(d, "sandbox::fs::grep", {"sandbox_id": sid, "path": W, "pattern": "x",
                                 "recursive": False}, code="S210")
    s = ok(d, "sandbox::fs::sed", {"sandbox_id": sid, "files": [W + "/two.txt"],
                                   "pattern": "(x)", "replacement": "[$1]"})
    assert s["total_replacements"] == 1
    assert ok(d, "sandbox::fs::read", {"sandbox_id": sid, "path": W + "/two.txt"})["body"] == "[x]\n"
    err(d, "sandbox::fs::sed", {"sandbox_id": sid, "files": [W + "/two.txt"], "path": W,
                                "pattern": "a", "replacement": "b"}, code="S210")
    err(d, "sandbox::fs::sed", {"sandbox_id": sid, "pattern": "a", "replacement": "b"},
        code="S210")


def test_fs_on_a_stopped_sandbox(d):
    s = ok(d, "sandbox::create", {"image": "shell"})["sandbox_id"]
    ok(d, "sandbox::stop", {"sandbox_id": s, "wait": True})
    # stop removes it from the registry: iii says S002, not S004.
    err(d, "sandbox::fs::ls", {"sandbox_id": s, "path": "/"}, code="S002")
    err(d, "sandbox::fs::write", {"sandbox_id": s, "path": "/workspace/a", "content": ""},
        code="S002")


# ---- create's checks, in iii's order ---------------------------------------------

@pytest.fixture(scope="module")
def tight(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("iii-tight")
    cfg = tmp / "config.yaml"
    cfg.write_text("max_concurrent_sandboxes: 1\npool_size: 0\n"
                   "per_image_caps:\n  python: {max_cpus: 1, max_memory_mb: 256}\n"
                   f"custom_images:\n  ghost: {tmp}/no-such-root\n")
    daemon = Daemon(config=str(cfg)).start()
    yield daemon
    daemon.close()


def test_create_checks_in_iii_order(tight):
    bad_env = {"1X": "a"}
    # Caps (S400) come before env (S001), and so do missing image files (S101).
    e = err(tight, "sandbox::create", {"image": "python", "cpus": 2, "env": bad_env}, token=None,
            code="S400", status=400)
    assert "cpus" in e["message"]
    err(tight, "sandbox::create", {"image": "python", "memory_mb": 512, "env": bad_env},
        token=None, code="S400")
    err(tight, "sandbox::create", {"image": "ghost", "env": bad_env}, token=None, code="S101")
    err(tight, "sandbox::create", {"image": "nope", "env": bad_env}, token=None, code="S100")
    err(tight, "sandbox::create", {"image": "shell", "env": bad_env}, token=None, code="S001")
    # The count comes first of all.
    s = ok(tight, "sandbox::create", {"image": "shell"}, token=None)["sandbox_id"]
    e = err(tight, "sandbox::create", {"image": "nope", "env": bad_env}, token=None,
            code="S400")
    assert "max_concurrent_sandboxes" in e["message"]
    ok(tight, "sandbox::stop", {"sandbox_id": s, "wait": True}, token=None)
