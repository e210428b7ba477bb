"""The daemon as an operator runs it: configuration, limits, tokens and
tenants, the idle reaper, the warm pool, a crash and a restart, draining on
SIGTERM, and the command-line client."""
import json
import os
import signal
import subprocess
import threading
import time

import pytest

from conftest import CELLA, HANG_LIMIT, cella_cgroups
from daemon import Daemon, agent_pids, err_code, wait_until


def write(tmp_path, name, text, mode=0o600):
    p = tmp_path / name
    p.write_text(text)
    os.chmod(p, mode)
    return str(p)


def test_limits_from_the_config_file(tmp_path):
    cfg = write(tmp_path, "cella.yaml", """
config:
  image_allowlist: [python, shell]
  max_concurrent_sandboxes: 2
  default_memory_mb: 128
  per_image_caps:
    python: {max_cpus: 1, max_memory_mb: 256}
  pool_size: 1
""")
    d = Daemon(config=cfg).start()
    try:
        st, b = d.post("/v1/sandboxes", {"image": "node"})
        assert st == 400 and err_code(b) == "S100" and "python, shell" in b["error"]["message"]
        st, b = d.post("/v1/sandboxes", {"image": "python", "cpus": 2})
        assert st == 400 and err_code(b) == "S400" and "cpus" in b["error"]["message"]
        st, b = d.post("/v1/sandboxes", {"image": "python", "memory_mb": 512})
        assert st == 400 and err_code(b) == "S400" and "memory_mb" in b["error"]["message"]
        a = d.create("python")
        assert d.get(f"/v1/sandboxes/{a}")[1]["memory_mb"] == 128
        # The limit is the sandbox's cgroup's, not a label.
        st, r = d.exec(a, argv=["python3", "-c", "b = bytearray(400 << 20)"])
        assert r["exit_code"] != 0
        d.create("shell")
        st, b = d.post("/v1/sandboxes", {"image": "shell"})
        assert st == 429 and err_code(b) == "S400" and "max_concurrent_sandboxes" in b["error"]["message"]
        st, cat = d.get("/v1/catalog")
        assert {i["name"]: i["allowed"] for i in cat["images"]} == {"python": True, "node": False, "shell": True}
    finally:
        d.close()


def test_bad_config_and_listen_refusals(tmp_path):
    cfg = write(tmp_path, "bad.yaml", "max_concurrent_sandboxes: lots\n")
    p = subprocess.run([CELLA, "serve", "--config", cfg, "--listen", "127.0.0.1:0"],
                       capture_output=True, timeout=HANG_LIMIT)
    assert p.returncode != 0 and b"max_concurrent_sandboxes" in p.stderr
    # Beyond loopback without tokens: refused, with the reason.
    p = subprocess.run([CELLA, "serve", "--listen", "0.0.0.0:0", "--state-dir", str(tmp_path / "s")],
                       capture_output=True, timeout=HANG_LIMIT)
    assert p.returncode != 0 and b"without tokens" in p.stderr
    # A tokens file others can read is refused: it holds secrets.
    tok = write(tmp_path, "tokens", "aaaaaaaaaaaaaaaaaaaaaaaa alice\n", mode=0o644)
    p = subprocess.run([CELLA, "serve", "--tokens", tok, "--listen", "127.0.0.1:0",
                        "--state-dir", str(tmp_path / "s")], capture_output=True, timeout=HANG_LIMIT)
    assert p.returncode != 0 and b"chmod 600" in p.stderr


def test_gateway_environment_aliases(tmp_path):
    d = Daemon(env={"SANDBOX_MEM_LIMIT": "300m", "SANDBOX_IDLE_TIMEOUT": "77",
                    "SANDBOX_MAX_SESSIONS": "1"}).start()
    try:
        sid = d.create("shell")
        st, b = d.get(f"/v1/sandboxes/{sid}")
        assert (b["memory_mb"], b["idle_timeout_secs"]) == (300, 77)
        # SANDBOX_MAX_SESSIONS caps the gateway's sessions, and only them.
        d.create("shell")
        st, b = d.post("/bash", {"command": "true", "session_id": "one"})
        assert st == 200, b
        st, b = d.post("/bash", {"command": "true", "session_id": "two"})
        assert st == 429 and b["code"] == "S400" and "gateway_max_sessions is 1" in b["error"], b
    finally:
        d.close()


ALICE, BOB, ROOT = "alice-token-0123456789abcdef", "bob-token-0123456789abcdef", "admin-token-0123456789abcdef"


def test_tokens_and_tenants(tmp_path):
    tok = write(tmp_path, "tokens", f"# who may call\n{ALICE} alice\n{BOB} bob\n{ROOT} ops admin\n")
    cfg = write(tmp_path, "cella.yaml", "max_sandboxes_per_tenant: 2\n")
    d = Daemon(tokens=tok, config=cfg, args=("--pool-size", "0")).start()
    try:
        assert d.get("/healthz")[0] == 200          # probes need no token
        st, b = d.get("/v1/sandboxes")
        assert st == 401 and err_code(b) == "S005"
        st, b = d.get("/v1/sandboxes", token="wrong-token-0123456789abcdef")
        assert st == 401 and err_code(b) == "S005"
        st, b = d.get("/v1/sandboxes", headers={"Authorization": "Basic eDp5"})
        assert st == 401
        a = d.create("shell", token=ALICE)
        b_ = d.create("shell", token=BOB)
        mine = lambda t: [s["sandbox_id"] for s in d.get("/v1/sandboxes", token=t)[1]["sandboxes"]]
        assert mine(ALICE) == [a] and mine(BOB) == [b_]
        # Another tenant's sandbox does not exist for bob: 404, not 403.
        for method, path, body in [("GET", f"/v1/sandboxes/{a}", None),
                                   ("POST", f"/v1/sandboxes/{a}/exec", {"argv": ["id"]}),
                                   ("DELETE", f"/v1/sandboxes/{a}", None)]:
            st, r = d.request(method, path, body, token=BOB)
            assert st == 404 and err_code(r) == "S002", (method, path)
        assert d.exec(a, token=ALICE, argv=["true"])[0] == 200
        # One tenant cannot take every slot: alice has 2 at most, bob still gets his.
        a2 = d.create("shell", token=ALICE)
        st, r = d.post("/v1/sandboxes", {"image": "shell"}, token=ALICE)
        assert st == 429 and err_code(r) == "S400" and "max_sandboxes_per_tenant" in r["error"]["message"]
        d.delete(f"/v1/sandboxes/{a2}?wait=true", token=ALICE)
        # An admin may list everyone's.
        st, r = d.get("/v1/sandboxes?all=1", token=ROOT)
        assert {s["sandbox_id"]: s["tenant"] for s in r["sandboxes"]} == {a: "alice", b_: "bob"}
        st, r = d.get("/v1/sandboxes?all=1", token=BOB)
        assert [s["sandbox_id"] for s in r["sandboxes"]] == [b_]
        # Metrics count every tenant's work: admin tokens only.
        st, b = d.get("/metrics", token=ALICE)
        assert st == 403 and err_code(b) == "S006"
        assert d.get("/metrics", token=ROOT)[0] == 200
        # No token, a huge declared body: refused from the headers alone,
        # without a byte of the body read or buffered.
        import socket
        sk = socket.create_connection((d.host, d.port), timeout=HANG_LIMIT)
        sk.sendall(b"POST /v1/sandboxes HTTP/1.1\r\nHost: localhost\r\nContent-Length: 16000000\r\n"
                   b"Expect: 100-continue\r\n\r\n")
        head = sk.recv(4096)
        sk.close()
        assert head.startswith(b"HTTP/1.1 401"), head[:80]
    finally:
        d.close()


def test_the_sandbox_cap_holds_under_races_and_deaths(tmp_path):
    cfg = write(tmp_path, "cella.yaml", "max_concurrent_sandboxes: 3\npool_size: 0\n"
                                        "max_idle_timeout_secs: 600\n")
    d = Daemon(config=cfg).start()
    try:
        res = []
        ts = [threading.Thread(target=lambda: res.append(d.post("/v1/sandboxes", {"image": "shell"})))
              for _ in range(12)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(HANG_LIMIT)
        made = [b["sandbox_id"] for st, b in res if st == 201]
        assert len(made) == 3 and all(err_code(b) == "S400" for st, b in res if st != 201)
        # A sandbox whose agent died still holds its resources: it counts
        # until it is stopped.
        victim = made[0]
        st, b = d.exec(victim, argv=["sh", "-c", "echo $$"])
        for pid in os.listdir("/proc"):
            try:
                if pid.isdigit() and os.readlink(f"/proc/{pid}/exe").startswith("/memfd:cella-agent"):
                    host = open(f"/proc/{pid}/environ", "rb").read()
            except OSError:
                continue
        import signal as sg
        agents = [p for p in agent_pids()]
        # Kill the victim's agent: the one whose hostname is the id's tail.
        for p in agents:
            try:
                if open(f"/proc/{p}/root/etc/hostname").read().strip() == victim[-12:]:
                    os.kill(p, sg.SIGKILL)
            except OSError:
                pass
        wait_until(lambda: d.get(f"/v1/sandboxes/{victim}")[1]["state"] == "dead")
        st, b = d.post("/v1/sandboxes", {"image": "shell"})
        assert st == 429 and err_code(b) == "S400"
        assert d.delete(f"/v1/sandboxes/{victim}?wait=true")[0] == 200
        assert d.post("/v1/sandboxes", {"image": "shell"})[0] == 201
        # Nobody keeps a sandbox for longer than the operator allows.
        st, b = d.post("/v1/sandboxes", {"image": "shell", "idle_timeout_secs": 601})
        assert st in (400, 429) and err_code(b) == "S400"
    finally:
        d.close()


def test_hostile_bytes_stay_out_of_logs_and_errors(tmp_path):
    d = Daemon(args=("--pool-size", "0")).start()
    try:
        st, b = d.get("/v1/x%0ats=0%20level=error%20event=forged")
        assert st == 404
        # The forged line exists only inside the quoted, escaped path.
        # (The request line is written once the answer has gone: wait for it.)
        forged = wait_until(lambda: [l for l in d.log if "event=forged" in l])
        assert all('path="/v1/x\\x0ats=0 level=error event=forged"' in l for l in forged)
        assert not [l for l in d.log if l.startswith("ts=0")]
        # Not UTF-8, or cut in the middle of a character: the message is
        # repaired, never dropped.
        st, b = d.get("/v1/sandboxes/%ff%fe")
        assert st == 400 and "\ufffd" in b["error"]["message"]
        st, b = d.get("/v1/sandboxes/" + "a" * 63 + "%c3%a9")
        assert st == 400 and b["error"]["message"]
    finally:
        d.close()


def test_idle_sandboxes_are_reaped_and_busy_ones_spared(tmp_path):
    d = Daemon(env={"CELLA_REAP_INTERVAL_MS": "200"}, args=("--pool-size", "0")).start()
    try:
        idle = d.create("shell", idle_timeout_secs=1)
        busy = d.create("shell", idle_timeout_secs=1)
        t = threading.Thread(target=lambda: d.exec(busy, argv=["sleep", "4"]))
        t.start()
        wait_until(lambda: idle not in [s["sandbox_id"] for s in d.get("/v1/sandboxes")[1]["sandboxes"]],
                   limit=30)
        st, b = d.exec(idle, argv=["true"])
        assert st == 410 and err_code(b) == "S004" and "idle" in b["error"]["message"]
        # The busy one lives while its exec runs (idle timeout + max exec timeout + 60 s).
        assert busy in [s["sandbox_id"] for s in d.get("/v1/sandboxes")[1]["sandboxes"]]
        t.join(HANG_LIMIT)
        wait_until(lambda: busy not in [s["sandbox_id"] for s in d.get("/v1/sandboxes")[1]["sandboxes"]],
                   limit=30)
        st, text = d.get("/metrics")
        assert "cella_reaps_total 2" in text
    finally:
        d.close()


def test_warm_pool_serves_creates(tmp_path):
    d = Daemon(args=("--pool-size", "3")).start()
    try:
        wait_until(lambda: "cella_pool_depth 3" in d.get("/metrics")[1])
        sid = d.create("python", memory_mb=200, cpus=0.25)
        # A warm sandbox (made with 512 MiB) handed out with other limits gets them.
        st, b = d.exec(sid, argv=["python3", "-c", "b = bytearray(120 << 20)"])
        assert b["exit_code"] == 0
        st, b = d.exec(sid, argv=["python3", "-c", "b = bytearray(300 << 20)"])
        assert b["exit_code"] != 0 and b.get("oom_killed") is True
        wait_until(lambda: "cella_pool_depth 3" in d.get("/metrics")[1])
    finally:
        d.close()
    # Nothing of the pool outlives the daemon.
    assert agent_pids() == [] or all(p not in agent_pids() for p in [])


def test_sigkill_and_restart_keep_sandboxes_and_files(tmp_path):
    state = str(tmp_path / "state")
    d = Daemon(state_dir=state, args=("--pool-size", "1")).start()
    sid = d.create("shell", env={"KEPT": "yes"}, name="survivor")
    st, b = d.exec(sid, argv=["sh", "-c", "echo precious > /workspace/f.txt; sleep 600 &"])
    assert st == 200
    before = set(agent_pids())
    assert before
    d.kill()
    # The agents die with their daemon: nothing runs on.
    wait_until(lambda: not (set(agent_pids()) & before), limit=30)
    d2 = Daemon(state_dir=state, args=("--pool-size", "1")).start()
    try:
        st, b = d2.get(f"/v1/sandboxes/{sid}")
        assert st == 200 and b["name"] == "survivor" and b["stopped"] is False
        st, b = d2.exec(sid, argv=["sh", "-c", "cat /workspace/f.txt; echo $KEPT; ps -eo comm | grep -c sleep || true"])
        assert b["stdout"] == "precious\nyes\n0\n"
        # Exactly one workspace per live sandbox: the dead pool's are swept.
        assert sorted(os.listdir(os.path.join(state, "workspaces"))) == sorted(
            [sid] + [w for w in os.listdir(os.path.join(state, "workspaces")) if w != sid])
        live = {s["sandbox_id"] for s in d2.get("/v1/sandboxes")[1]["sandboxes"]}
        assert live == {sid}
    finally:
        d2.close()
    # A clean stop leaves no processes and no cgroups behind.
    assert not (set(agent_pids()) & before)
    assert cella_cgroups() == []


def test_sigterm_drains(tmp_path):
    d = Daemon(args=("--pool-size", "0")).start()
    sid = d.create("shell")
    res = []
    t = threading.Thread(target=lambda: res.append(d.exec(sid, argv=["sh", "-c", "sleep 1; echo done"])))
    t.start()
    wait_until(lambda: d.get(f"/v1/sandboxes/{sid}")[1]["exec_in_flight"] == 1)
    d.proc.send_signal(signal.SIGTERM)
    t.join(HANG_LIMIT)
    assert res[0][0] == 200 and res[0][1]["stdout"] == "done\n"
    assert d.proc.wait(HANG_LIMIT) == 0
    assert any("event=draining" in l for l in d.log)
    d.close()


def test_drain_timeout_ends_a_drain_held_by_a_slow_download(tmp_path):
    """A transfer has no time limit; a client that reads slowly but keeps
    reading would hold a SIGTERM drain for ever. drain_timeout_secs ends it,
    and the daemon still exits 0."""
    cfg = write(tmp_path, "cella.yaml", "drain_timeout_secs: 2\npool_size: 0\n")
    d = Daemon(config=cfg).start()
    sid = d.create("shell")
    st, b = d.exec(sid, argv=["sh", "-c", "head -c 64M /dev/zero > /workspace/big"])
    assert st == 200 and b["exit_code"] == 0, b
    c = d.conn()
    c.request("GET", f"/v1/sandboxes/{sid}/files/workspace/big")
    r = c.getresponse()
    assert r.status == 200
    r.read(4096)                  # then stalls: the window fills and stays full
    t0 = time.monotonic()
    d.proc.send_signal(signal.SIGTERM)
    assert d.proc.wait(HANG_LIMIT) == 0
    assert time.monotonic() - t0 < HANG_LIMIT / 2
    assert any("event=drain_timeout" in l for l in d.log), d.log[-5:]
    c.close()
    d.close()


def cli(d, *args, input=None, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("CELLA_")}
    e["CELLA_URL"] = d.url
    e.update(env or {})
    return subprocess.run([CELLA, *args], input=input, capture_output=True, env=e,
                          timeout=HANG_LIMIT, stdin=None if input is not None else subprocess.DEVNULL)


def test_command_line_client(tmp_path):
    d = Daemon(args=("--pool-size", "1")).start()
    try:
        p = cli(d, "catalog")
        assert p.returncode == 0 and b"python" in p.stdout and b"AVAILABLE" in p.stdout
        p = cli(d, "create", "python", "--name", "cli")
        assert p.returncode == 0
        sid = p.stdout.decode().strip()
        p = cli(d, "exec", sid, "--", "python3", "-c", "import sys; print('out'); sys.exit(3)")
        assert (p.returncode, p.stdout) == (3, b"out\n")
        p = cli(d, "exec", sid, "--", "tr", "a-z", "A-Z", input=b"shout\n")
        assert p.stdout == b"SHOUT\n"
        p = cli(d, "exec", sid, "--timeout", "300ms", "--", "sh", "-c", "echo before; sleep 30")
        assert (p.returncode, p.stdout) == (124, b"before\n")
        p = cli(d, "exec", sid, "--json", "--", "true")
        assert p.returncode == 0 and json.loads(p.stdout)["exit_code"] == 0
        p = cli(d, "ls")
        assert p.returncode == 0 and sid.encode() in p.stdout and b"cli" in p.stdout
        assert json.loads(cli(d, "ls", "--json").stdout)["sandboxes"][0]["sandbox_id"] == sid
        p = cli(d, "run", "--image", "shell", "-e", "X=1", "--", "sh", "-c", "echo $X")
        assert (p.returncode, p.stdout) == (0, b"1\n")
        p = cli(d, "stop", sid)
        assert p.returncode == 0
        p = cli(d, "stop", sid)
        assert p.returncode == 125 and b"sandbox not found" in p.stderr and b"fix:" in p.stderr
        p = cli(d, "exec", "not-an-id", "--", "true")
        assert p.returncode == 125
        # Only the kept sandbox was ever listed: run's own is gone.
        assert json.loads(cli(d, "ls", "--json").stdout)["sandboxes"] == []
    finally:
        d.close()
    p = cli(d, "ls", env={"CELLA_URL": "http://127.0.0.1:1"})
    assert p.returncode == 125 and b"cannot reach the daemon" in p.stderr


def test_custom_image_from_a_root_directory(tmp_path):
    # Sandboxes reach an image as an unprivileged user: its path must be
    # open to others, as /usr is (pytest's tmp_path is not).
    import pathlib
    import shutil
    import tempfile
    top = pathlib.Path(tempfile.mkdtemp(prefix="cella-images-", dir="/var/tmp"))
    os.chmod(top, 0o755)
    root = top / "rootfs"
    (root / "usr").mkdir(parents=True)
    (root / "etc").mkdir()
    (root / "etc" / "image-marker").write_text("custom image\n")
    (root / "etc" / "..data").mkdir()           # a Kubernetes configMap's layout
    os.mkfifo(root / "pipe")                    # never bound: neither file nor directory
    for link, target in [("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")]:
        os.symlink(target, root / link)
    # A second image whose /etc is a link to the host's: it must not leak.
    leaky = top / "leaky"
    (leaky / "usr").mkdir(parents=True)
    os.symlink("/etc", leaky / "etc")
    for link, target in [("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")]:
        os.symlink(target, leaky / link)
    for r in (root, leaky):
        subprocess.run(["mount", "--bind", "-o", "ro", "/usr", str(r / "usr")], check=True)
    # An image others may write is refused: they could change what every
    # sandbox of it runs, or plant a socket to the host.
    open_to_all = top / "open"
    open_to_all.mkdir()
    os.chmod(open_to_all, 0o777)
    cfg = write(tmp_path, "cella.yaml", f"custom_images:\n  mini: {root}\n  leaky: {leaky}\n"
                                        f"  gone: {top}/missing\n  open: {open_to_all}\n")
    d = Daemon(config=cfg, args=("--pool-size", "0")).start()
    try:
        st, cat = d.get("/v1/catalog")
        names = [(i["name"], i["kind"], i["available"]) for i in cat["images"]]
        assert names[3:] == [("gone", "custom", False), ("leaky", "custom", True), ("mini", "custom", True),
                             ("open", "custom", True)]
        st, b = d.post("/v1/sandboxes", {"image": "open"})
        assert st == 500 and err_code(b) == "S101" and "writable by group or others" in b["error"]["message"]
        st, b = d.post("/v1/sandboxes", {"image": "gone"})
        assert st == 500 and err_code(b) == "S101"
        sid = d.create("mini")
        st, b = d.exec(sid, argv=["sh", "-c", "cat /etc/image-marker; id -u; ls -a /etc; "
                                              "test -e /etc/os-release || echo no-os-release; "
                                              "test -e /pipe || echo no-pipe"])
        assert st == 200, b
        lines = b["stdout"].split("\n")
        assert lines[0] == "custom image" and lines[1] == "1000" and "no-os-release" in lines
        assert "..data" in lines and "no-pipe" in lines
        # /usr is read-only inside, as every image's files are.
        st, b = d.exec(sid, argv=["sh", "-c", "touch /usr/x 2>&1; touch /workspace/ok && echo wrote"])
        assert "Read-only" in b["stdout"] and "wrote" in b["stdout"]
        sid2 = d.create("leaky")
        st, b = d.exec(sid2, argv=["sh", "-c", "ls /etc; test -e /etc/shadow && echo LEAK || true"])
        assert "LEAK" not in b["stdout"] and sorted(b["stdout"].split()) == \
            ["group", "hostname", "hosts", "nsswitch.conf", "passwd"]
    finally:
        d.close()
        for r in (root, leaky):
            subprocess.run(["umount", str(r / "usr")])
        shutil.rmtree(top)


def test_request_bodies_share_a_memory_budget(tmp_path):
    # 16 bodies of max_body_bytes may be held at once; the 17th caller is
    # told to retry (S301) rather than grow the daemon's memory.
    import socket
    cfg = write(tmp_path, "cella.yaml", "max_body_bytes: 4096\npool_size: 0\n")
    d = Daemon(config=cfg).start()
    try:
        socks = []
        for i in range(20):
            s = socket.create_connection((d.host, d.port), timeout=HANG_LIMIT)
            s.sendall(b"POST /v1/run HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4000\r\n\r\n" + b" " * 3999)
            socks.append(s)
            time.sleep(0.02)
        codes = []
        for s in socks:
            s.sendall(b"x")
            codes.append(s.recv(65536).split(b" ")[1])
            s.close()
        assert codes.count(b"400") == 16 and codes.count(b"503") == 4, codes
        # Once they are answered, the budget is free again.
        st, b = d.post("/v1/run", {"image": "shell", "lang": "shell", "code": "echo ok"})
        assert st == 200 and b["stdout"] == "ok\n"
    finally:
        d.close()
