"""Every door into a sandbox gives the same sandbox: a native exec, a
one-shot /v1/run (plain and typed), iii's sandbox::run, Flujo's /execute,
the gateway's /bash and /execute, MCP's run_code. Each runs the same
self-inspection, and each must show every layer of rule 1: seccomp in
filter mode, no_new_privs, no capabilities, uid 1000, no inherited
descriptor, RLIMIT_CORE 1, a hostname and network of its own."""
import json
import os

import pytest

from adv import ALICE, two_tenants

INSPECT = r'''
import json, os, resource, socket
st = dict(l.split(":\t", 1) for l in open("/proc/self/status").read().splitlines() if ":\t" in l)
fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))
print("INSPECT" + json.dumps({
    "seccomp": st["Seccomp"].strip(), "nnp": st["NoNewPrivs"].strip(),
    "caps": sorted({st[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}),
    "uid": os.getuid(), "gid": os.getgid(), "fds_above_2": len([f for f in fds if f > 2]) - 1,
    "core": list(resource.getrlimit(resource.RLIMIT_CORE)),
    "hostname": socket.gethostname(),
    "ifaces": sorted(n for _, n in socket.if_nameindex()),
    "host_env": [k for k in os.environ if k.startswith("ADV_HOST_")]}))
'''

WANT = {"seccomp": "2", "nnp": "1", "caps": ["0000000000000000"], "uid": 1000, "gid": 1000,
        "fds_above_2": 0, "core": [1, 1], "ifaces": ["lo"], "host_env": []}


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    daemon = two_tenants(tmp_path_factory, "adv-doors", env={"ADV_HOST_SECRET": "x"})
    yield daemon
    daemon.close()


def doors(d):
    sid = d.create("python", token=ALICE)
    try:
        yield "native exec", d.exec(sid, token=ALICE, cmd="python3", args=["-c", INSPECT])
    finally:
        d.delete(f"/v1/sandboxes/{sid}", token=ALICE)
    yield "/v1/run", d.post("/v1/run", {"image": "python", "lang": "python", "code": INSPECT},
                            token=ALICE)
    yield "/v1/run typed", d.post("/v1/run", {"image": "python", "code": INSPECT,
                                              "cache": "disable", "outputs": {}, "inputs": {}},
                                  token=ALICE)
    yield "iii sandbox::run", d.post("/v1/trigger", {
        "function_id": "sandbox::run",
        "payload": {"image": "python", "lang": "python", "code": INSPECT}}, token=ALICE)
    yield "Flujo /execute", d.post("/execute", {
        "code": INSPECT, "language": "python", "files": {}, "environment": {},
        "arguments": [], "timeout_s": 60}, token=ALICE)
    yield "gateway /execute", d.post("/execute", {"code": INSPECT, "session_id": "doors"},
                                     token=ALICE)
    yield "gateway /bash", d.post("/bash", {"command": "python3 -c '%s'" % INSPECT.replace(
        "'", "'\"'\"'"), "session_id": "doors"}, token=ALICE)
    yield "MCP run_code", d.post("/mcp", {
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "run_code", "arguments": {"code": INSPECT}}},
        token=ALICE, headers={"Accept": "application/json, text/event-stream"})


def stdout_of(b):
    if isinstance(b, dict) and "result" in b:          # MCP: the native answer as text
        b = json.loads(b["result"]["content"][0]["text"])
    return b["stdout"]


def test_every_door_gives_the_same_sandbox(d):
    host = os.uname().nodename
    wrong = []
    n = 0
    for door, (st, b) in doors(d):
        assert st == 200, (door, st, b)
        lines = [l for l in stdout_of(b).splitlines() if l.startswith("INSPECT")]
        assert lines, (door, b)
        got = json.loads(lines[0][len("INSPECT"):])
        n += 1
        for k, v in WANT.items():
            if got[k] != v:
                wrong.append(f"{door}: {k} is {got[k]!r}, wanted {v!r}")
        if got["hostname"] == host:
            wrong.append(f"{door}: the host's hostname")
    assert n == 8
    assert not wrong, "ESCAPED (a door with a weaker sandbox):\n" + "\n".join(wrong)
