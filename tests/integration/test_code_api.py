"""Code mode's routes end to end: POST /v1/code/run and /v1/code/resume
against a live daemon and its worker pool (docs/api.md, "Code mode"), with
the real interpreter and, further down, with a fake one for the pool's
failure paths."""
import json
import os
import signal
import threading
import time

import pytest

from conftest import CELLA
from daemon import Daemon, tokens_file, wait_until

A = "tok-alice-0123456789abcdef"
B = "tok-bob-0123456789abcdefgh"
ADMIN = "tok-admin-0123456789abcdef"
ERROR_KEYS = {"type", "code", "message", "docs_url", "retryable", "fix", "fix_note"}


def write_config(directory, text):
    path = os.path.join(str(directory), "cella.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("code")
    tokens = tokens_file(tmp, {A: "alice", B: "bob", ADMIN: "ops admin"})
    config = write_config(tmp, "pool_size: 0\ncode_workers: 2\ncode_max_time_ms: 30000\n")
    daemon = Daemon(tokens=tokens, config=config).start()
    yield daemon
    daemon.close()


def run(d, body, token=A):
    return d.post("/v1/code/run", body, token=token)


def resume(d, body, token=A):
    return d.post("/v1/code/resume", body, token=token)


def ok_run(d, body, token=A):
    st, b = run(d, body, token)
    assert st == 200, (st, b)
    return b


def http_err(st, b, status, code):
    assert st == status, (st, b)
    assert set(b["error"]) == ERROR_KEYS, b
    assert b["error"]["code"] == code, b
    return b["error"]


def has_interpreter(d):
    b = ok_run(d, {"code": "1 + 1"})
    return not (b["status"] == "error" and b["error"]["type"] == "NotImplementedError")


@pytest.fixture
def interp(d):
    assert has_interpreter(d), "the daemon's workers answer without the interpreter"
    return d


def worker_pids(d):
    """The daemon's code workers: its children running `cella code-worker`."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == d.proc.pid and cmd[1:2] == [b"code-worker"]:
            pids.append(int(pid))
    return pids


# ---- answers -------------------------------------------------------------------


def test_complete(interp):
    b = ok_run(interp, {"code": "x = 6\nprint('hi', x)\nx * 7"})
    assert b["status"] == "complete", b
    assert b["result"] == 42
    assert b["stdout"] == "hi 6\n"
    assert isinstance(b["duration_us"], int)


def test_inputs_round_trip(interp):
    b = ok_run(interp, {"code": "[a, b, c]", "inputs": {
        "a": {"$tuple": [1, 2]}, "b": {"$int": "123456789012345678901234567890"}, "c": None}})
    assert b["status"] == "complete", b
    assert b["result"] == [{"$tuple": [1, 2]}, {"$int": "123456789012345678901234567890"}, None]


def test_python_error_is_an_answer(interp):
    b = ok_run(interp, {"code": "x = 1\n1 / 0"})
    assert b["status"] == "error", b
    assert b["error"] == {"type": "ZeroDivisionError", "message": "division by zero", "line": 2}
    b = ok_run(interp, {"code": "x = (\n"})
    assert b["status"] == "error" and b["error"]["type"] == "SyntaxError", b


def test_call_and_resume(interp):
    b = ok_run(interp, {"code": "r = fetch(1, k='v')\nprint('got', r)\nr + 1",
                        "functions": ["fetch"]})
    assert b["status"] == "call", b
    assert len(b["calls"]) == 1
    call = b["calls"][0]
    assert call["function"] == "fetch" and call["args"] == [1] and call["kwargs"] == {"k": "v"}
    st, r = resume(interp, {"run_id": b["run_id"],
                            "results": [{"call_id": call["call_id"], "value": 41}]})
    assert st == 200 and r["status"] == "complete" and r["result"] == 42, r
    assert r["stdout"] == "got 41\n"
    # Finished: it cannot be resumed again.
    st, r = resume(interp, {"run_id": b["run_id"],
                            "results": [{"call_id": call["call_id"], "value": 41}]})
    http_err(st, r, 404, "S500")


def test_resume_with_an_exception(interp):
    code = "try:\n    fetch()\nexcept KeyError as e:\n    r = 'caught ' + str(e)\nr"
    b = ok_run(interp, {"code": code, "functions": ["fetch"]})
    cid = b["calls"][0]["call_id"]
    st, r = resume(interp, {"run_id": b["run_id"], "results": [
        {"call_id": cid, "error": {"type": "KeyError", "message": "nope"}}]})
    assert st == 200 and r["status"] == "complete", r
    assert r["result"] == "caught 'nope'"


def test_gather(interp):
    code = ("import asyncio\n"
            "async def main():\n"
            "    return await asyncio.gather(f(1), f(2), f(3))\n"
            "await main()\n")
    b = ok_run(interp, {"code": code, "functions": ["f"], "top_level_await": True})
    assert b["status"] == "call", b
    calls = b["calls"]
    assert sorted(c["args"][0] for c in calls) == [1, 2, 3]
    results = [{"call_id": c["call_id"], "value": c["args"][0] * 10} for c in calls]
    # Answer two, then the third.
    st, r = resume(interp, {"run_id": b["run_id"], "results": results[:2]})
    assert st == 200, r
    if r["status"] == "call":
        st, r = resume(interp, {"run_id": b["run_id"], "results": results[2:]})
    assert r["status"] == "complete" and r["result"] == [10, 20, 30], r


def test_run_moves_between_workers(tmp_path):
    """One worker: a second run needs it, so the paused run is dumped into
    the daemon and loaded again on resume."""
    config = write_config(tmp_path, "pool_size: 0\ncode_workers: 1\n")
    d = Daemon(config=config).start()
    try:
        assert has_interpreter(d), "the daemon's workers answer without the interpreter"
        b = ok_run(d, {"code": "x = f()\nx * 2", "functions": ["f"]})
        assert b["status"] == "call"
        assert ok_run(d, {"code": "3"})["result"] == 3
        st, r = resume(d, {"run_id": b["run_id"],
                           "results": [{"call_id": b["calls"][0]["call_id"], "value": 21}]})
        assert st == 200 and r["result"] == 42, r
    finally:
        d.close()


def test_hostile_loop_times_out(interp):
    t0 = time.time()
    b = ok_run(interp, {"code": "while True:\n    pass", "limits": {"max_time_ms": 300}})
    assert b["status"] == "error" and b["error"]["type"] == "TimeoutError", b
    assert time.time() - t0 < 10
    assert ok_run(interp, {"code": "2"})["result"] == 2


# ---- requests refused ------------------------------------------------------------


@pytest.mark.parametrize("raw", ["{", "[]", "nope", '{"code": "1", "code": "2"}'])
def test_malformed_bodies(d, raw):
    st, b = d.request("POST", "/v1/code/run", raw=raw, token=A)
    http_err(st, b, 400, "S001")


@pytest.mark.parametrize("body", [
    {},                                               # code missing
    {"code": 5},
    {"code": "1", "colour": "red"},                   # unknown field
    {"code": "1", "inputs": [1]},
    {"code": "1", "inputs": {"not an identifier": 1}},
    {"code": "1", "functions": "fetch"},
    {"code": "1", "functions": ["a-b"]},
    {"code": "1", "limits": {"max_time_ms": 10 ** 9}},  # over code_max_time_ms
    {"code": "1", "limits": {"max_time_ms": 0}},
    {"code": "1", "limits": {"max_memory_bytes": 1 << 50}},
    {"code": "1", "limits": {"max_recursion_depth": -1}},
    {"code": "1", "limits": {"speed": 1}},
    {"code": "1", "limits": 5},
    {"code": "1", "top_level_await": "yes"},
])
def test_bad_run_bodies(d, body):
    st, b = run(d, body)
    e = http_err(st, b, 400, "S001")
    assert "invalid request" in e["message"]


RUN_ID = "12345678-1234-8234-9234-123456789abc"


@pytest.mark.parametrize("body,status,code", [
    ({"results": [{"call_id": 1, "value": 1}]}, 400, "S001"),                 # run_id missing
    ({"run_id": "nope", "results": [{"call_id": 1, "value": 1}]}, 400, "S001"),
    ({"run_id": RUN_ID}, 400, "S001"),                                         # results missing
    ({"run_id": RUN_ID, "results": []}, 400, "S001"),
    ({"run_id": RUN_ID, "results": [{"call_id": 0, "value": 1}]}, 400, "S001"),
    ({"run_id": RUN_ID, "results": [{"call_id": 1}]}, 400, "S001"),
    ({"run_id": RUN_ID, "results": [{"call_id": 1, "value": 1, "error": {}}]}, 400, "S001"),
    ({"run_id": RUN_ID, "results": [{"call_id": 1, "error": {"type": "no such"}}]}, 400, "S001"),
    ({"run_id": RUN_ID, "results": [{"call_id": 1, "value": 1}], "x": 1}, 400, "S001"),
    ({"run_id": RUN_ID, "results": [{"call_id": 1, "value": None}]}, 404, "S500"),
])
def test_bad_resume_bodies(d, body, status, code):
    st, b = resume(d, body)
    http_err(st, b, status, code)


def test_auth_and_tenants(interp):
    st, b = interp.post("/v1/code/run", {"code": "1"})
    http_err(st, b, 401, "S005")
    b = ok_run(interp, {"code": "f()", "functions": ["f"]})
    assert b["status"] == "call"
    res = {"run_id": b["run_id"], "results": [{"call_id": b["calls"][0]["call_id"], "value": 1}]}
    # Another tenant's run is unknown to it.
    st, r = resume(interp, res, token=B)
    http_err(st, r, 404, "S500")
    st, r = resume(interp, res, token=A)
    assert st == 200 and r["status"] == "complete" and r["result"] == 1, r


def test_bad_call_id_keeps_the_run(interp):
    b = ok_run(interp, {"code": "f() + 1", "functions": ["f"]})
    cid = b["calls"][0]["call_id"]
    st, r = resume(interp, {"run_id": b["run_id"], "results": [{"call_id": cid + 100,
                                                                "value": 1}]})
    http_err(st, r, 400, "S001")
    st, r = resume(interp, {"run_id": b["run_id"], "results": [{"call_id": cid, "value": 1}]})
    assert st == 200 and r["result"] == 2, r


def proc_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def paused_runs(d):
    st, m = d.get("/metrics", token=ADMIN)
    assert st == 200, (st, m)
    return sum(int(line.rsplit(" ", 1)[1]) for line in m.splitlines()
               if line.startswith("cella_code_runs_paused{"))


def test_result_with_too_many_values(interp):
    """A result whose JSON text holds millions of values from a tiny heap
    (63 MB of [[{},{},...],...] from one 1000-item list) is refused before
    the daemon parses it (jansson would spend some 5 GB on it): a prompt
    MemoryError answer, and the daemon's memory does not balloon. The same
    for a call's arguments: the run is then ended, with no run_id."""
    pid = interp.proc.pid
    rss0 = proc_kb(pid, "VmRSS")
    t0 = time.monotonic()
    b = ok_run(interp, {"code": "a = [{}] * 1000\n[a] * 21000"})
    took = time.monotonic() - t0
    assert b["status"] == "error", b
    assert b["error"]["type"] == "MemoryError", b
    assert "more than 1000000 JSON values" in b["error"]["message"], b
    assert "run_id" not in b
    assert took < 20, took
    paused0 = paused_runs(interp)
    b = ok_run(interp, {"code": "a = [{}] * 1000\nf([a] * 21000)\n1", "functions": ["f"]})
    assert b["status"] == "error" and b["error"]["type"] == "MemoryError", b
    assert "call's arguments" in b["error"]["message"], b
    assert "run_id" not in b
    assert paused_runs(interp) == paused0     # the run was ended, not left paused
    grew = proc_kb(pid, "VmHWM") - rss0
    assert grew < 300 * 1024, f"the daemon's peak RSS grew by {grew} kB"
    # A big answer under the bound still goes through.
    b = ok_run(interp, {"code": "[[1, 2, 3]] * 100000"})
    assert b["status"] == "complete" and len(b["result"]) == 100000, b
    assert interp.get("/healthz")[0] == 200


# ---- workers killed, runs expired ------------------------------------------------------


def test_worker_killed(d):
    """Killing every worker (the one running a step among them) answers that
    step with an InternalError; the pool replaces them; the daemon goes on."""
    before = worker_pids(d)
    assert len(before) == 2, before
    box = {}
    interp = has_interpreter(d)

    def long_run():
        box["answer"] = run(d, {"code": "while True:\n    pass",
                                "limits": {"max_time_ms": 20000}})

    t = threading.Thread(target=long_run)
    if interp:
        t.start()
        time.sleep(0.5)
    for pid in before:
        os.kill(pid, signal.SIGKILL)
    if interp:
        t.join(60)
        st, b = box["answer"]
        assert st == 200 and b["status"] == "error", b
        assert b["error"]["type"] == "InternalError", b
    after = wait_until(lambda: (lambda p: p if len(p) == 2 and not set(p) & set(before)
                                else None)(worker_pids(d)), limit=30)
    assert len(after) == 2
    st, b = run(d, {"code": "1 + 1"})
    assert st == 200, b
    if interp:
        assert b["result"] == 2
    assert d.get("/healthz")[0] == 200


def worker_status(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return dict(line.split(":\t", 1) for line in f.read().splitlines() if ":\t" in line)
    except OSError:
        return {}                 # it ended while we looked


def test_workers_are_confined(d):
    # A worker replaced by an earlier test may still be starting (not yet
    # serving): wait until every one has confined itself.
    wait_until(lambda: len(worker_pids(d)) == 2 and all(
        worker_status(p).get("Seccomp", "").strip() == "2" for p in worker_pids(d)), limit=30)
    for pid in worker_pids(d):
        status = worker_status(pid)
        assert status["Seccomp"].strip() == "2", status
        assert status["NoNewPrivs"].strip() == "1"
        assert status["Uid"].split()[0] != "0"
        assert status["CapEff"].strip("0\t ") == "", status
        assert sorted(os.listdir(f"/proc/{pid}/fd")) == ["3"]


def test_expiry(tmp_path):
    config = write_config(tmp_path, "pool_size: 0\ncode_workers: 1\ncode_run_ttl_secs: 1\n")
    d = Daemon(config=config).start()
    try:
        assert has_interpreter(d), "the daemon's workers answer without the interpreter"
        b = ok_run(d, {"code": "f()", "functions": ["f"]})
        time.sleep(2.5)
        st, r = resume(d, {"run_id": b["run_id"],
                           "results": [{"call_id": b["calls"][0]["call_id"], "value": 1}]})
        e = http_err(st, r, 404, "S500")
        assert "expired" in e["message"], e
    finally:
        d.close()


# ---- the routes and the pool with a fake interpreter ---------------------------------
# The daemon's workers are build/tests/test_code_fake_worker (CELLA_CODE_WORKER_EXE):
# the real worker loop and seccomp filter around a fake interpreter whose programs
# are commands, one per line (tests/unit/code_fake_run.c): call FN ARGS, gather N FN,
# result JSON|$last, raise TYPE MSG, print TEXT, spin, crash, syscall.

FAKE = os.path.join(os.path.dirname(os.path.abspath(CELLA)), "tests", "test_code_fake_worker")


def fake_daemon(tmp, config="", tokens=None):
    if not os.path.exists(FAKE):
        pytest.fail(f"{FAKE} is not built (it is part of the tests target)")
    cfg = write_config(tmp, "pool_size: 0\n" + config)
    return Daemon(config=cfg, tokens=tokens, env={"CELLA_CODE_WORKER_EXE": FAKE}).start()


@pytest.fixture(scope="module")
def fd(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("codefake")
    d = fake_daemon(tmp, "code_workers: 2\n", tokens=tokens_file(tmp, {A: "alice", B: "bob"}))
    yield d
    d.close()


def test_fake_complete_and_error(fd):
    b = ok_run(fd, {"code": "print hello\nresult {\"a\": [1, 2]}"})
    assert b == {"status": "complete", "result": {"a": [1, 2]}, "stdout": "hello\n",
                 "duration_us": 0}, b
    b = ok_run(fd, {"code": "print x\nraise KeyError nope"})
    assert b["status"] == "error" and b["stdout"] == "x\n", b
    assert b["error"] == {"type": "KeyError", "message": "nope", "line": 2}
    assert "run_id" not in b


def test_fake_result_with_nul(fd):
    b = ok_run(fd, {"code": 'result {"s": "a\\u0000b"}'})
    assert b["status"] == "complete" and b["result"] == {"s": "a\0b"}, b


def test_fake_deep_values(fd):
    """Values nest at most 256 levels: deeper ones are refused before the
    daemon's JSON library recurses on them (a few thousand levels would
    overflow an HTTP thread's stack)."""
    def deep(n):
        return "[" * n + "]" * n
    for n in (300, 2040, 100000):
        st, b = fd.request("POST", "/v1/code/run", token=A,
                           raw='{"code": "result 1", "inputs": {"v": ' + deep(n) + '}}')
        if n > 2040:
            http_err(st, b, 400, "S001")      # past jansson's own parsing limit
        else:
            e = http_err(st, b, 400, "S001")
            assert "nests deeper than 256" in e["message"], e
    assert ok_run(fd, {"code": "result 1", "inputs": {"v": [[[[1]]]]}})["result"] == 1
    b = ok_run(fd, {"code": "result " + deep(200)})
    assert b["status"] == "complete", b
    b = ok_run(fd, {"code": "result " + deep(300)})
    assert b["status"] == "error" and b["error"]["type"] == "ValueError", b
    b = ok_run(fd, {"code": "call f []\nresult $last"})
    st, r = fd.request("POST", "/v1/code/resume", token=A, raw=(
        '{"run_id": "%s", "results": [{"call_id": 1, "value": %s}]}' % (b["run_id"], deep(2040))))
    http_err(st, r, 400, "S001")
    assert fd.get("/healthz")[0] == 200


def test_fake_call_resume_and_tenants(fd):
    b = ok_run(fd, {"code": "call fetch [1, {\"k\": null}]\nprint after\nresult $last",
                    "inputs": {"x": {"$tuple": [1]}}})
    assert b["status"] == "call", b
    assert b["calls"] == [{"call_id": 1, "function": "fetch", "args": [1, {"k": None}],
                           "kwargs": {}}]
    assert b["pending"] == [1]
    res = {"run_id": b["run_id"], "results": [{"call_id": 1, "value": {"$set": [1]}}]}
    http_err(*resume(fd, res, token=B), 404, "S500")
    http_err(*resume(fd, {"run_id": b["run_id"], "results": [{"call_id": 9, "value": 1}]}),
             400, "S001")
    st, r = resume(fd, res)
    assert st == 200 and r == {"status": "complete", "result": {"$set": [1]},
                               "stdout": "after\n", "duration_us": 0}, r
    e = http_err(*resume(fd, res), 404, "S500")
    assert "ended" in e["message"], e


def test_fake_error_answer(fd):
    b = ok_run(fd, {"code": "call f []\nresult $last"})
    st, r = resume(fd, {"run_id": b["run_id"], "results": [
        {"call_id": 1, "error": {"type": "PermissionError", "message": "denied"}}]})
    assert st == 200 and r["status"] == "error", r
    assert r["error"]["type"] == "PermissionError" and r["error"]["message"] == "denied"


def test_fake_gather(fd):
    b = ok_run(fd, {"code": "gather 3 f\nresult $last"})
    assert [c["call_id"] for c in b["calls"]] == [1, 2, 3] and b["pending"] == [1, 2, 3]
    st, r = resume(fd, {"run_id": b["run_id"], "results": [{"call_id": 3, "value": 3},
                                                           {"call_id": 1, "value": 1}]})
    assert st == 200 and r["status"] == "call" and r["calls"] == [] and r["pending"] == [2], r
    http_err(*resume(fd, {"run_id": b["run_id"], "results": [{"call_id": 1, "value": 1}]}),
             400, "S001")
    st, r = resume(fd, {"run_id": b["run_id"], "results": [{"call_id": 2, "value": "two"}]})
    assert r["status"] == "complete" and r["result"] == "two", r


def test_fake_crash_and_forbidden_syscall(fd):
    for code in ("crash", "syscall\nresult 1"):
        b = ok_run(fd, {"code": code})
        assert b["status"] == "error" and b["error"]["type"] == "InternalError", b
    assert ok_run(fd, {"code": "result 7"})["result"] == 7
    assert fd.get("/healthz")[0] == 200


def test_fake_timeout(fd):
    t0 = time.time()
    b = ok_run(fd, {"code": "spin", "limits": {"max_time_ms": 300}})
    assert b["status"] == "error" and b["error"]["type"] == "TimeoutError", b
    assert time.time() - t0 < 10
    assert ok_run(fd, {"code": "result 1"})["result"] == 1


def test_fake_worker_killed_mid_run(fd):
    box = {}
    t = threading.Thread(target=lambda: box.setdefault(
        "a", run(fd, {"code": "spin", "limits": {"max_time_ms": 20000}})))
    t.start()
    time.sleep(0.5)
    before = worker_pids(fd)
    for pid in before:
        os.kill(pid, signal.SIGKILL)
    t.join(60)
    st, b = box["a"]
    assert st == 200 and b["error"]["type"] == "InternalError", b
    wait_until(lambda: len(worker_pids(fd)) == 2 and not set(worker_pids(fd)) & set(before),
               limit=30)
    assert ok_run(fd, {"code": "result 2"})["result"] == 2


def test_fake_run_moves_between_workers_and_expires(tmp_path):
    d = fake_daemon(tmp_path, "code_workers: 1\ncode_run_ttl_secs: 2\n")
    try:
        b = ok_run(d, {"code": "call f []\nprint resumed\nresult $last"})
        # The only worker is needed: the paused run is dumped into the daemon.
        assert ok_run(d, {"code": "result 3"})["result"] == 3
        st, r = resume(d, {"run_id": b["run_id"], "results": [{"call_id": 1, "value": 5}]})
        assert st == 200 and r["result"] == 5 and r["stdout"] == "resumed\n", r
        b = ok_run(d, {"code": "call f []\nresult $last"})
        time.sleep(3.5)
        e = http_err(*resume(d, {"run_id": b["run_id"],
                                 "results": [{"call_id": 1, "value": 5}]}), 404, "S500")
        assert "expired" in e["message"], e
        st, m = d.get("/metrics")
        assert "cella_code_workers_replaced_total" in m
    finally:
        d.close()


def test_fake_workers_die_with_the_daemon(tmp_path):
    """A daemon killed outright takes its workers along, even one stuck in a
    step (they ask for SIGKILL when the daemon's pool thread ends)."""
    d = fake_daemon(tmp_path, "code_workers: 2\n")
    def spin():
        try:
            run(d, {"code": "spin", "limits": {"max_time_ms": 30000}})
        except OSError:
            pass                  # the daemon is killed under it

    threading.Thread(target=spin, daemon=True).start()
    time.sleep(0.5)
    pids = worker_pids(d)
    assert len(pids) == 2
    d.kill()
    def gone():
        return all(not os.path.exists(f"/proc/{p}") or
                   open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"
                   for p in pids)
    wait_until(gone, limit=10)
    d.close()


def mcp_call(d, name, arguments, token=A):
    st, b = d.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": name, "arguments": arguments}}, token=token,
                   headers={"Accept": "application/json, text/event-stream"})
    assert st == 200, (st, b)
    return b["result"]


def test_fake_mcp_tools(fd):
    """MCP's code_run and code_resume answer what the routes answer, as text."""
    r = mcp_call(fd, "code_run", {"code": "call fetch [1]\nresult $last"})
    assert not r["isError"], r
    b = json.loads(r["content"][0]["text"])
    assert b["status"] == "call" and b["calls"][0]["function"] == "fetch", b
    r = mcp_call(fd, "code_resume", {"run_id": b["run_id"],
                                     "results": [{"call_id": 1, "value": [2]}]})
    assert json.loads(r["content"][0]["text"])["result"] == [2], r
    r = mcp_call(fd, "code_resume", {"run_id": b["run_id"],
                                     "results": [{"call_id": 1, "value": [2]}]})
    assert r["isError"] and r["content"][0]["text"].startswith("S500"), r
    r = mcp_call(fd, "code_run", {"code": 1})
    assert r["isError"] and r["content"][0]["text"].startswith("S001"), r
