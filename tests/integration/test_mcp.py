"""The MCP server, driven by the official MCP SDK client from npm
(@modelcontextprotocol/sdk, pinned in tests/integration/mcp): over the
streamable HTTP transport at /mcp and over stdio through `cella mcp`.
initialize, tools/list, and a call of every tool, its errors included."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import CELLA
from daemon import Daemon, tokens_file

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mcp")
TOKEN = "tok-mcp-alice-0123456789abcdef"
OTHER = "tok-mcp-bob-0123456789abcdefgh"
TOOLS = {"run_code", "create_sandbox", "exec", "read_file", "write_file", "list_files", "grep",
         "glob", "code_run", "code_resume", "stop_sandbox"}


@pytest.fixture(scope="module")
def sdk():
    if not os.path.isdir(os.path.join(HERE, "node_modules", "@modelcontextprotocol")):
        npm = shutil.which("npm")
        assert npm, "npm is missing: make deps installs it"
        p = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
    return os.path.join(HERE, "client.mjs")


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    tokens = tokens_file(tmp_path_factory.mktemp("mcp"), {TOKEN: "alice", OTHER: "bob"})
    daemon = Daemon(tokens=tokens).start()
    yield daemon
    daemon.close()


def drive(sdk, plan, mode="http", url=None, token=TOKEN, env=None):
    if mode == "http":
        args = ["node", sdk, "http", url] + ([token] if token else [])
    else:
        args = ["node", sdk, "stdio", CELLA]
    e = {k: v for k, v in os.environ.items() if not k.startswith("CELLA_")}
    e.update(env or {})
    p = subprocess.run(args, input=json.dumps(plan), capture_output=True, text=True, env=e,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def text(result):
    assert set(result) >= {"content"}, result
    (c,) = result["content"]
    assert c["type"] == "text"
    return c["text"]


def ok(result):
    assert result.get("isError") is False, result
    t = text(result)
    try:
        return json.loads(t)
    except ValueError:
        return t


def failed(result, code):
    assert result.get("isError") is True, result
    t = text(result)
    assert t.startswith(code + " "), t
    return t


PLAN = [
    {"name": "run_code", "arguments": {"code": "print(6*7)"}},
    {"name": "run_code", "arguments": {"code": "console.log(process.argv.length)",
                                       "language": "node"}},
    {"name": "run_code", "arguments": {"code": "read x; echo got $x; exit 3", "language": "bash",
                                       "stdin": "in\n"}},
    {"name": "run_code", "arguments": {"code": "import time; print('a', flush=True); time.sleep(30)",
                                       "timeout_ms": 500}},
    {"name": "create_sandbox", "arguments": {"image": "python", "memory_mb": 256}},
    {"name": "write_file", "arguments": {"sandbox_id": "$SID", "path": "src/app.py",
                                         "content": "# TODO: fix\nprint('app')\n"}},
    {"name": "exec", "arguments": {"sandbox_id": "$SID", "command": "python3 src/app.py | tr a-z A-Z"}},
    {"name": "exec", "arguments": {"sandbox_id": "$SID", "argv": ["sh", "-c", "echo $V"],
                                   "env": {"V": "set"}}},
    {"name": "read_file", "arguments": {"sandbox_id": "$SID", "path": "/workspace/src/app.py"}},
    {"name": "list_files", "arguments": {"sandbox_id": "$SID", "path": "src"}},
    {"name": "grep", "arguments": {"sandbox_id": "$SID", "pattern": "TODO"}},
    {"name": "glob", "arguments": {"sandbox_id": "$SID", "pattern": "**/*.py"}},
    {"name": "read_file", "arguments": {"sandbox_id": "$SID", "path": "nope.txt"}},
    {"name": "write_file", "arguments": {"sandbox_id": "$SID", "path": "a", "content": "x",
                                         "parents": False, "bogus": 1}},
    {"name": "exec", "arguments": {"sandbox_id": "$SID"}},
    {"name": "grep", "arguments": {"sandbox_id": "$SID", "pattern": "("}},
    {"name": "stop_sandbox", "arguments": {"sandbox_id": "$SID"}},
    {"name": "exec", "arguments": {"sandbox_id": "$SID", "command": "true"}},
    {"name": "no_such_tool", "arguments": {}},
    {"name": "run_code", "arguments": {"code": "1", "language": "cobol"}},
]


def check_session(out, d):
    assert "fatal" not in out, out.get("fatal")
    assert out["server"]["name"] == "cella"
    assert "create_sandbox" in out["instructions"]
    tools = {t["name"]: t for t in out["tools"]}
    assert set(tools) == TOOLS
    for t in tools.values():
        assert t["description"] and t["inputSchema"]["type"] == "object", t
    assert tools["exec"]["inputSchema"]["required"] == ["sandbox_id"]
    r = out["results"]
    assert ok(r[0])["stdout"] == "42\n"
    assert ok(r[1])["stdout"] == "2\n"
    b = ok(r[2])
    assert b["stdout"] == "got in\n" and b["exit_code"] == 3
    b = ok(r[3])
    assert b["timed_out"] is True and b["exit_code"] == 124 and b["stdout"] == "a\n"
    sid = ok(r[4])["sandbox_id"]
    assert len(sid) == 36
    assert ok(r[5]) == {"bytes_written": 25, "path": "/workspace/src/app.py"}
    assert ok(r[6])["stdout"] == "APP\n"
    assert ok(r[7])["stdout"] == "set\n"
    assert ok(r[8]) == "# TODO: fix\nprint('app')\n"
    assert [e["name"] for e in ok(r[9])["entries"]] == ["app.py"]
    assert ok(r[10])["matches"] == [{"path": "/workspace/src/app.py", "line": 1,
                                     "content": "# TODO: fix"}]
    assert ok(r[11])["paths"] == ["/workspace/src/app.py"]
    failed(r[12], "S211")
    assert "bogus" in failed(r[13], "S001")
    assert "command" in failed(r[14], "S001")
    failed(r[15], "S217")
    assert ok(r[16]) == {"sandbox_id": sid, "stopped": True}
    t = failed(r[17], "S002")
    assert "what to do:" in t
    assert "Unknown tool" in r[18]["thrown"] and r[18]["code"] == -32602
    assert "cobol" in failed(r[19], "S001")


def test_streamable_http(sdk, d):
    out = drive(sdk, PLAN, url=d.url + "/mcp")
    check_session(out, d)
    assert out["protocolVersion"] in ("2025-11-25", "2025-06-18")
    # The sandboxes are the token's tenant's, as on every route.
    assert d.get("/v1/sandboxes", token=TOKEN)[1]["sandboxes"] == []


def test_stdio_through_cella_mcp(sdk, d):
    out = drive(sdk, PLAN, mode="stdio", env={"CELLA_URL": d.url, "CELLA_TOKEN": TOKEN})
    check_session(out, d)


def test_a_sandbox_is_the_tenants_own(sdk, d):
    out = drive(sdk, [{"name": "create_sandbox", "arguments": {}}], url=d.url + "/mcp")
    sid = ok(out["results"][0])["sandbox_id"]
    other = drive(sdk, [{"name": "exec", "arguments": {"sandbox_id": sid, "command": "true"}}],
                  url=d.url + "/mcp", token=OTHER)
    failed(other["results"][0], "S002")
    assert [s["sandbox_id"] for s in d.get("/v1/sandboxes", token=TOKEN)[1]["sandboxes"]] == [sid]
    d.delete(f"/v1/sandboxes/{sid}", token=TOKEN)


def test_auth_is_required(sdk, d):
    out = drive(sdk, [], url=d.url + "/mcp", token=None)
    assert "fatal" in out and "401" in out["fatal"] or "nauthorized" in out["fatal"], out
    out = drive(sdk, [], mode="stdio", env={"CELLA_URL": d.url, "CELLA_TOKEN": "wrong"})
    assert "fatal" in out, out


def test_raw_protocol_edges(d):
    def post(body, token=TOKEN):
        return d.request("POST", "/mcp", raw=body, token=token,
                         headers={"Content-Type": "application/json",
                                  "Accept": "application/json, text/event-stream"})
    st, b = post("{nope")
    assert st == 400 and b["error"]["code"] == -32700 and b["id"] is None
    st, b = post('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    assert st == 202
    st, b = post('{"jsonrpc": "2.0", "id": 7, "method": "resources/list"}')
    assert st == 200 and b["error"]["code"] == -32601 and b["id"] == 7
    st, b = post('{"jsonrpc": "1.0", "id": 1, "method": "ping"}')
    assert b["error"]["code"] == -32600
    st, b = post('[{"jsonrpc": "2.0", "id": 1, "method": "ping"},'
                 ' {"jsonrpc": "2.0", "method": "notifications/cancelled"},'
                 ' {"jsonrpc": "2.0", "id": "two", "method": "tools/list"}]')
    assert st == 200 and [m["id"] for m in b] == [1, "two"] and b[0]["result"] == {}
    st, b = post('{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": '
                 '{"protocolVersion": "1999-01-01", "capabilities": {}, '
                 '"clientInfo": {"name": "x", "version": "1"}}}')
    assert b["result"]["protocolVersion"] == "2025-11-25"
    st, b = post('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}')
    assert b["error"]["code"] == -32602
    st, b = post('{"jsonrpc": "2.0", "id": 1, "method": "ping"}', token=None)
    assert st == 401 and b["error"]["code"] == -32001 and b["jsonrpc"] == "2.0"
    st, b = d.get("/mcp", token=TOKEN)
    assert st == 405 and b["jsonrpc"] == "2.0"


def relay(d, lines, token=TOKEN, url=None, timeout=120):
    """Runs `cella mcp` on lines; returns the messages it wrote, by id."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CELLA_")}
    env.update({"CELLA_URL": url or d.url, "CELLA_TOKEN": token})
    p = subprocess.run([CELLA, "mcp"], input="\n".join(lines) + "\n", capture_output=True,
                       text=True, env=env, timeout=timeout)
    assert p.returncode == 0, p.stderr
    out = [json.loads(l) for l in p.stdout.splitlines()]
    for m in out:
        for x in (m if isinstance(m, list) else [m]):
            assert x["jsonrpc"] == "2.0", m
    return out


def test_cella_mcp_relays_only_json_rpc(d):
    ping = '{"jsonrpc":"2.0","id":7,"method":"ping"}'
    # A URL that is not the daemon's root: the answer is not JSON-RPC, so
    # the request gets an error under its own id, and nothing else is written.
    (m,) = relay(d, [ping], url=d.url + "/v1")
    assert m["id"] == 7 and m["error"]["code"] == -32603 and "HTTP 404" in m["error"]["message"]
    # A wrong token for a batch: each request its own error; blank lines skipped.
    (m,) = relay(d, ["   ", '[' + ping + ',{"jsonrpc":"2.0","id":"b","method":"ping"},'
                     '{"jsonrpc":"2.0","method":"notifications/initialized"}]'], token="wrong")
    assert [x["id"] for x in m] == [7, "b"] and all(x["error"]["code"] == -32001 for x in m)
    (m,) = relay(d, ["not json"])
    assert m["id"] is None and m["error"]["code"] == -32700
    # The daemon down: an error, not silence.
    (m,) = relay(d, [ping], url="http://127.0.0.1:1")
    assert m["id"] == 7 and "cannot reach" in m["error"]["message"]


def test_cella_mcp_answers_while_a_long_call_runs(d):
    slow = json.dumps({"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
                       "params": {"name": "run_code",
                                  "arguments": {"code": "import time; time.sleep(3); print('done')"}}})
    ping = '{"jsonrpc":"2.0","id":"ping","method":"ping"}'
    out = relay(d, [slow, ping])
    # The ping is answered first: it did not wait for the run.
    assert [m["id"] for m in out] == ["ping", "slow"]
    assert json.loads(out[1]["result"]["content"][0]["text"])["stdout"] == "done\n"


def test_batches_are_bounded_and_names_repaired(d):
    def post(body):
        return d.request("POST", "/mcp", raw=body, token=TOKEN)
    ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    st, b = post("[" + ",".join([ping] * 17) + "]")
    assert b["error"]["code"] == -32600 and "16" in b["error"]["message"]
    st, b = post("[" + ",".join([ping] * 16) + "]")
    assert st == 200 and len(b) == 16
    # A name cut inside a UTF-8 character still gets its answer.
    name = "a" + "é" * 80
    st, b = post(json.dumps({"jsonrpc": "2.0", "id": 3, "method": name}))
    assert st == 200 and b["id"] == 3 and b["error"]["code"] == -32601
    st, b = post(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                             "params": {"name": name}}))
    assert b["id"] == 4 and b["error"]["code"] == -32602
    st, b = post(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                             "params": {"name": "run_code",
                                        "arguments": {"code": "1", "language": name}}}))
    assert b["result"]["isError"] and "S001" in b["result"]["content"][0]["text"]
