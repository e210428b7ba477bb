"""A sandbox user with bob's token reaching for alice's sandboxes, sessions
and cached results through every dialect: native /v1, iii /v1/trigger, Flujo
and gateway /execute, the gateway's session routes, typed /v1/run, MCP.
Every attempt must be refused (or act on bob's own things only), and nothing
of alice's may come back in any answer. And the token comparison must not
tell a right prefix from a wrong first byte."""
import json
import statistics
import subprocess
import time
import uuid

import pytest

from adv import ALICE, BOB, PRELUDE, assert_held, two_tenants
from conftest import CELLA, HANG_LIMIT

SECRET = "alice-secret-" + uuid.uuid4().hex
SESSION = "shared-name-" + uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    d = two_tenants(tmp_path_factory, "adv-tenants")
    aid = d.create("python", token=ALICE)
    st, b = d.exec(aid, token=ALICE, cmd="sh", args=["-c", f"echo {SECRET} > /workspace/secret"])
    assert st == 200 and b["exit_code"] == 0, b
    st, g = d.post("/bash", {"command": f"echo {SECRET} > secret", "session_id": SESSION},
                   token=ALICE)
    assert st == 200 and g["exit_code"] == 0, g
    yield d, aid, g["sandbox_id"]
    d.close()


def native(aid):
    up = aid.upper()
    return [
        ("GET", f"/v1/sandboxes/{aid}", None),
        ("GET", f"/v1/sandboxes/{up}", None),
        ("POST", f"/v1/sandboxes/{aid}/exec", {"cmd": "cat", "args": ["/workspace/secret"]}),
        ("POST", f"/v1/sandboxes/{up}/exec", {"cmd": "cat", "args": ["/workspace/secret"]}),
        ("POST", f"/v1/sandboxes/{aid}/fs/read", {"path": "/workspace/secret"}),
        ("POST", f"/v1/sandboxes/{aid}/fs/write", {"path": "/workspace/secret", "content": "x"}),
        ("POST", f"/v1/sandboxes/{aid}/fs/ls", {"path": "/workspace"}),
        ("POST", f"/v1/sandboxes/{aid}/fs/stat", {"path": "/workspace/secret"}),
        ("POST", f"/v1/sandboxes/{aid}/fs/grep", {"path": "/workspace", "pattern": "alice"}),
        ("POST", f"/v1/sandboxes/{aid}/fs/glob", {"path": "/workspace", "pattern": "*"}),
        ("POST", f"/v1/sandboxes/{aid}/fs/rm", {"path": "/workspace/secret"}),
        ("POST", f"/v1/sandboxes/{aid}/fs/mv", {"src": "/workspace/secret", "dst": "/workspace/s2"}),
        ("POST", f"/v1/sandboxes/{aid}/fs/chmod", {"path": "/workspace/secret", "mode": "0777"}),
        ("POST", f"/v1/sandboxes/{aid}/fs/mkdir", {"path": "/workspace/d"}),
        ("POST", f"/v1/sandboxes/{aid}/fs/sed", {"path": "/workspace/secret", "pattern": "a",
                                                 "replacement": "b"}),
        ("GET", f"/v1/sandboxes/{aid}/files/workspace/secret", None),
        ("GET", f"/v1/sandboxes/{aid}/archive/workspace", None),
        ("PUT", f"/v1/sandboxes/{aid}/archive/workspace", "not a tar"),
        ("POST", f"/v1/sandboxes/{aid}/exec?stream=1", {"cmd": "cat", "args": ["/workspace/secret"]}),
        ("PUT", f"/v1/sandboxes/{aid}/files/workspace/secret", "overwritten"),
        ("DELETE", f"/v1/sandboxes/{aid}", None),
        ("GET", "/v1/sandboxes?all=1", None),
        ("GET", "/metrics", None),
    ]


def iii(aid):
    calls = [("sandbox::exec", {"sandbox_id": aid, "cmd": "cat", "args": ["/workspace/secret"]}),
             ("sandbox::fs::read", {"sandbox_id": aid, "path": "/workspace/secret"}),
             ("sandbox::fs::write", {"sandbox_id": aid, "path": "/workspace/x", "content": "x"}),
             ("sandbox::fs::ls", {"sandbox_id": aid, "path": "/workspace"}),
             ("sandbox::stop", {"sandbox_id": aid}),
             ("sandbox::exec", {"sandbox_id": aid, "tenant_id": "alice", "cmd": "true"}),
             ("sandbox::list", {"tenant_id": "alice"})]
    return [("POST", "/v1/trigger", {"function_id": f, "payload": p}) for f, p in calls] + \
           [("POST", "/v1/trigger", {"function_id": "sandbox::exec", "tenant_id": "alice",
                                     "payload": {"sandbox_id": aid, "cmd": "true"}})]


def gateway():
    out = []
    for prefix in ("", "/v1/sandbox"):
        who = {"tenant_id": "alice", "session_id": SESSION}
        out += [
            ("POST", prefix + "/execute", {"code": "print(open('secret').read())", **who}),
            ("POST", prefix + "/bash", {"command": "cat secret", **who}),
            ("POST", prefix + "/read", {"path": "secret", **who}),
            ("POST", prefix + "/read_binary", {"path": "secret", **who}),
            ("POST", prefix + "/write", {"path": "secret", "content": "x", **who}),
            ("POST", prefix + "/grep", {"pattern": "alice", **who}),
            ("POST", prefix + "/glob", {"pattern": "*", **who}),
            ("GET", prefix + "/sessions", None),
            ("GET", prefix + "/sessions?tenant_id=alice", None),
            ("DELETE", prefix + f"/sessions/alice/{SESSION}", None),
            ("POST", prefix + f"/sessions/alice/{SESSION}/copy",
             {"files": [{"path": "secret", "content": "x"}]}),
        ]
    return out


def mcp(aid):
    def call(name, args):
        return ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                 "params": {"name": name, "arguments": args}})
    return [call("exec", {"sandbox_id": aid, "command": "cat /workspace/secret"}),
            call("read_file", {"sandbox_id": aid, "path": "/workspace/secret"}),
            call("stop_sandbox", {"sandbox_id": aid})]


def send(d, method, path, body, token):
    raw = body if isinstance(body, str) else None
    headers = {"Accept": "application/json, text/event-stream"} if path == "/mcp" else None
    if path.endswith("?stream=1"):   # the streaming exec: its own code path
        path, headers = path[:-len("?stream=1")], {"Accept": "text/event-stream"}
    return d.request(method, path, body=None if raw else body, raw=raw, token=token,
                     headers=headers)


def refused(status, body):
    if path_is_mcp(body):
        return body.get("error") or body.get("result", {}).get("isError")
    return 400 <= status < 500


def lists_own(path, body):
    """A list route answers 200 with the caller's own list (the leak check
    above is what matters there)."""
    return path.endswith("?all=1") or (isinstance(body, dict) and
                                       body.get("function_id") == "sandbox::list")


def path_is_mcp(body):
    return isinstance(body, dict) and body.get("jsonrpc") == "2.0"


def test_bob_cannot_reach_alices_things(world):
    d, aid, gid = world
    escaped = []
    for kind, attempts in (("native", native(aid)), ("native (session sandbox)", native(gid)),
                           ("iii", iii(aid)), ("gateway", gateway()), ("mcp", mcp(aid))):
        for method, path, body in attempts:
            st, b = send(d, method, path, body, BOB)
            text = b if isinstance(b, str) else json.dumps(b)
            asked = path + json.dumps(body)
            if SECRET in text or any(i in text and i not in asked.lower() for i in (aid, gid)):
                escaped.append(f"{kind} {method} {path}: alice's data in the answer: {text[:300]}")
            elif not refused(st, b) and not lists_own(path, body):
                escaped.append(f"{kind} {method} {path}: answered {st}: {text[:300]}")
    assert not escaped, "ESCAPED:\n" + "\n".join(escaped)
    # Alice's things are all still there, untouched.
    st, b = d.exec(aid, token=ALICE, cmd="cat", args=["/workspace/secret"])
    assert st == 200 and b["stdout"] == SECRET + "\n", (st, b)
    st, b = d.post("/bash", {"command": "cat secret", "session_id": SESSION}, token=ALICE)
    assert st == 200 and b["stdout"] == SECRET + "\n" and b["sandbox_id"] == gid, b
    st, b = d.get("/v1/sandboxes", token=BOB)
    assert st == 200 and aid not in json.dumps(b) and gid not in json.dumps(b), b


def test_bob_using_alices_names_gets_his_own(world):
    # A tenant_id in a body that Flujo ignores, a session_id that alice also
    # uses, a tenant field on create: each acts in bob's tenant, never alice's.
    d, aid, gid = world
    leaks = []
    st, b = d.post("/execute", {"code": "import os; print(sorted(os.listdir('.')))",
                                "language": "python", "tenant_id": "alice", "files": {},
                                "environment": {}, "arguments": [], "timeout_s": 30}, token=BOB)
    if st != 200 or "secret" in b.get("stdout", "") or SECRET in json.dumps(b):
        leaks.append(f"Flujo /execute with tenant_id alice: {st} {b}")
    st, b = d.post("/bash", {"command": "cat secret; ls", "session_id": SESSION}, token=BOB)
    if st != 200 or SECRET in json.dumps(b) or b.get("sandbox_id") == gid:
        leaks.append(f"gateway /bash with alice's session_id: {st} {b}")
    st, b = d.post("/v1/sandboxes", {"image": "python", "tenant": "alice"}, token=BOB)
    if st == 201:
        st2, mine = d.get("/v1/sandboxes", token=ALICE)
        if b["sandbox_id"] in json.dumps(mine):
            leaks.append("create with tenant alice made alice a sandbox")
        d.delete(f"/v1/sandboxes/{b['sandbox_id']}", token=BOB)
    assert not leaks, "ESCAPED:\n" + "\n".join(leaks)


def test_typed_run_cache_is_per_tenant(world):
    # A cached typed run must not answer another tenant: not its output (a
    # leak) and not one it could plant for the other (a poisoning).
    d, _, _ = world
    body = {"image": "python", "lang": "python", "cache": "auto", "outputs": {"o": "str"},
            "code": "import uuid\no = str(uuid.uuid4())"}
    st, a1 = d.post("/v1/run", body, token=ALICE)
    if st == 400 and "cache" in json.dumps(a1):
        pytest.skip(f"typed runs take other fields here: {a1}")
    assert st == 200 and a1.get("success") and a1["outputs"]["o"], a1
    st, a2 = d.post("/v1/run", body, token=ALICE)
    assert st == 200 and a2.get("cached") is True, ("alice's own cache is used", a2)
    st, b1 = d.post("/v1/run", body, token=BOB)
    assert st == 200, b1
    assert not b1.get("cached") and b1.get("outputs") != a1.get("outputs"), \
        f"ESCAPED: bob got alice's cached result {b1}"


def timed(d, token, n):
    """Seconds of n requests with this token, one connection, interleaved."""
    c = d.conn()
    out = []
    for _ in range(n):
        t = time.perf_counter()
        c.request("GET", "/v1/sandboxes", headers={"Authorization": f"Bearer {token}"})
        r = c.getresponse()
        r.read()
        out.append(time.perf_counter() - t)
        assert r.status == 401
    c.close()
    return out


def test_token_comparison_leaks_no_timing(world):
    # Guessing alice's token byte by byte needs the daemon to answer a right
    # prefix more slowly than a wrong first byte. Tokens are compared as
    # SHA-256 digests with CRYPTO_memcmp (core/config.c tokens_find), so
    # the two must not differ beyond noise. The bound is generous (a leak
    # worth exploiting over HTTP is a steady difference, which many rounds
    # of medians show; scheduling noise is not).
    d, _, _ = world
    prefix = ALICE[:-1] + ("x" if ALICE[-1] != "x" else "y")   # all but the last byte right
    first = ("y" if ALICE[0] != "y" else "z") + ALICE[1:]       # the first byte wrong
    timed(d, prefix, 50)                                         # warm up
    ratios = []
    for _ in range(9):
        a = statistics.median(timed(d, prefix, 40))
        b = statistics.median(timed(d, first, 40))
        ratios.append(a / b)
    r = statistics.median(ratios)
    assert 0.5 < r < 2.0, f"a right prefix answers {r:.2f}x as long as a wrong first byte"


def test_token_lookup_is_constant_time_in_code():
    # The statistical test above cannot see nanoseconds; the code must not
    # have them to see: one digest compare with CRYPTO_memcmp for every
    # token, no early exit, no strcmp of secrets.
    import os
    import re
    src = open(os.path.join(os.path.dirname(__file__), "../../src/core/config.c")).read()
    body = re.search(r"const cfg_token \*tokens_find\([^)]*\)\n\{(.*?)\n\}", src, re.S).group(1)
    assert "CRYPTO_memcmp" in body and "SHA256" in body
    assert not re.search(r"\b(strcmp|strncmp|memcmp|break|return\s+&)", body), body


def test_an_empty_tokens_file_does_not_open_the_daemon(tmp_path):
    # Emptying the tokens file (to revoke everyone, or by a deploy gone
    # wrong) must not turn the daemon into open mode, where every local
    # process is an admin of every tenant's sandboxes.
    tokens = tmp_path / "tokens"
    tokens.write_text("# everyone revoked\n\n")
    tokens.chmod(0o600)
    p = subprocess.Popen([CELLA, "serve", "--listen", "127.0.0.1:0", "--state-dir",
                          str(tmp_path / "state"), "--tokens", str(tokens)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    try:
        _, err = p.communicate(timeout=HANG_LIMIT / 4)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
        raise AssertionError(f"ESCAPED: the daemon started in open mode: {err[-500:]}")
    assert p.returncode != 0 and "lists no token" in err, (p.returncode, err)


def test_a_sandbox_cannot_call_the_daemon(world):
    # Code in a sandbox holding no token could still try the daemon itself
    # (open mode on loopback trusts every local caller): its port must be
    # unreachable on every address of the host.
    d, aid, _ = world
    addrs = sorted({"127.0.0.1", d.host} | {a.split("/")[0] for a in subprocess.run(
        ["ip", "-o", "-4", "addr"], capture_output=True, text=True).stdout.split()
        if a.count(".") == 3 and "/" in a})
    code = PRELUDE + """
import socket
for a in %r:
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((a, %d))
        R[f"daemon at {a}"] = "ESCAPED: connected"
    except OSError:
        R[f"daemon at {a}"] = "held"
done()
""" % (addrs, d.port)
    st, b = d.exec(aid, token=ALICE, cmd="python3", args=["-c", code])
    assert st == 200 and b["exit_code"] == 0, b
    assert_held(json.loads(b["stdout"].splitlines()[-1]), len(addrs))
    assert d.get("/healthz")[0] == 200     # while the host reaches it
