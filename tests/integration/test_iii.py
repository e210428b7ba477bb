"""The iii dialect end to end: POST /v1/trigger {function_id, payload} for
every sandbox::* function, with iii's exact result shapes and its bare error
objects (iii-sandbox.md and BEHAVIOUR-NOTES §2)."""
import base64
import os
import time

import pytest

from daemon import Daemon

ERROR_KEYS = {"type", "code", "message", "docs_url", "retryable", "fix", "fix_note"}


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("iii")
    tokens = tmp / "tokens"
    tokens.write_text("tok-alice-0123456789abcdef alice\ntok-bob-0123456789abcdefgh bob\n")
    os.chmod(tokens, 0o600)
    daemon = Daemon(tokens=str(tokens)).start()
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
