"""`cella box`: what a user of bubblewrap or isolate would try first."""
import json
import os
import pwd
import subprocess
import threading

from conftest import CELLA, box, cella_cgroups


def test_runs_a_command_and_relays_output(state_dir):
    p = box(state_dir, "--", "sh", "-c", "echo out; echo err >&2", check=0)
    assert p.stdout == b"out\n"
    assert p.stderr == b"err\n"


def test_exit_status_is_the_commands(state_dir):
    assert box(state_dir, "--", "sh", "-c", "exit 3").returncode == 3
    assert box(state_dir, "--", "true").returncode == 0
    assert box(state_dir, "--", "sh", "-c", "kill -TERM $$").returncode == 128 + 15


def test_the_command_can_reopen_its_own_stdio(state_dir):
    # Scripts write to /dev/stderr and read /dev/stdin: the pipes must be
    # the sandbox user's, not the agent's root's (mode 0600).
    p = box(state_dir, "--", "sh", "-c",
            "echo warn > /dev/stderr; cat /dev/stdin; echo out > /dev/stdout",
            input=b"in\n", check=0)
    assert p.stdout == b"in\nout\n"
    assert p.stderr == b"warn\n"


def test_not_found_and_not_executable(state_dir):
    p = box(state_dir, "--", "no-such-command")
    assert p.returncode == 127
    assert b"exec: no-such-command: not found" in p.stderr
    p = box(state_dir, "--", "/etc/passwd")
    assert p.returncode == 126
    p = box(state_dir, "--", "/no/such/path")
    assert p.returncode == 127


def test_interpreters_and_tools_work(state_dir):
    assert box(state_dir, "--", "python3", "-c", "print(6*7)", check=0).stdout == b"42\n"
    assert box(state_dir, "--", "node", "-e", "console.log(6*7)", check=0).stdout == b"42\n"
    assert box(state_dir, "--", "bash", "-c", "echo $((6*7))", check=0).stdout == b"42\n"
    script = ("cd /workspace && mkdir -p d && echo needle > d/f && grep -rn needle . "
              "&& find . -name f && head -c 3 d/f")
    p = box(state_dir, "--", "bash", "-c", script, check=0)
    assert p.stdout == b"./d/f:1:needle\n./d/f\nnee"


def test_identity_and_environment(state_dir):
    p = box(state_dir, "-e", "FOO=bar", "--env=EMPTY=", "--", "sh", "-c",
            "id -u; id -g; id -un; pwd; env | sort", check=0,
            env={"CELLA_SECRET_FROM_HOST": "leak"})
    lines = p.stdout.decode().splitlines()
    assert lines[:4] == ["1000", "1000", "sandbox", "/workspace"]
    env = dict(l.split("=", 1) for l in lines[4:])
    assert env["FOO"] == "bar" and env["EMPTY"] == ""
    assert env["HOME"] == "/workspace"
    assert "CELLA_SECRET_FROM_HOST" not in env and "CELLA_STATE_DIR" not in env
    assert set(env) == {"FOO", "EMPTY", "HOME", "PATH", "USER", "LOGNAME", "SHELL", "LANG",
                        "TMPDIR", "PWD"}


def test_request_env_overrides_the_base(state_dir):
    p = box(state_dir, "-e", "PATH=/bin", "-e", "HOME=/tmp", "--", "/bin/sh", "-c",
            'echo "$PATH $HOME"', check=0)
    assert p.stdout == b"/bin /tmp\n"


def test_hostname_is_the_short_id(state_dir, tmp_path):
    res = tmp_path / "r.json"
    p = box(state_dir, "--result-json", str(res), "--", "hostname", check=0)
    sid = json.loads(res.read_text())["sandbox_id"]
    assert p.stdout.decode().strip() == sid[-12:]
    assert p.stdout.decode().strip() != os.uname().nodename


def test_stdin_is_relayed(state_dir):
    p = box(state_dir, "--", "tr", "a-z", "A-Z", input=b"hello\n", check=0)
    assert p.stdout == b"HELLO\n"
    # More than the stdin window, to exercise flow control.
    data = os.urandom(3 << 20)
    p = box(state_dir, "--", "sha256sum", input=data, check=0)
    import hashlib
    assert p.stdout.split()[0].decode() == hashlib.sha256(data).hexdigest()


def test_stdin_closed_early_by_the_command(state_dir):
    p = box(state_dir, "--", "head", "-c", "5", input=b"x" * (4 << 20), check=0)
    assert p.stdout == b"xxxxx"


def test_no_stdin_is_eof(state_dir):
    p = box(state_dir, "--", "cat", check=0)
    assert p.stdout == b""


def user_dir(path, uid=4321):
    """A directory owned by a regular (made-up) user, as a workspace must be."""
    path.mkdir(parents=True, exist_ok=True)
    os.chown(path, uid, uid)
    return path


def test_workspace_dir_is_shared_and_owned_by_its_owner(state_dir, tmp_path):
    ws = user_dir(tmp_path / "ws")
    (ws / "in.txt").write_text("from host\n")
    os.chown(ws / "in.txt", 4321, 4321)
    p = box(state_dir, "--workspace", str(ws), "--", "sh", "-c",
            "cat in.txt; echo from box > out.txt; mkdir sub; stat -c '%u:%g' in.txt", check=0)
    assert p.stdout == b"from host\n1000:1000\n"
    st = os.stat(ws / "out.txt")
    owner = os.stat(ws)
    assert (st.st_uid, st.st_gid) == (owner.st_uid, owner.st_gid)
    assert (ws / "out.txt").read_text() == "from box\n"


def test_workspace_owned_by_another_user(state_dir, tmp_path):
    ws = tmp_path / "nobodys"
    ws.mkdir()
    nobody = pwd.getpwnam("nobody")
    os.chown(ws, nobody.pw_uid, nobody.pw_gid)
    box(state_dir, "--workspace", str(ws), "--", "sh", "-c", "echo x > f", check=0)
    assert os.stat(ws / "f").st_uid == nobody.pw_uid


def test_workspace_of_a_system_account_is_refused(state_dir, tmp_path):
    # Its owner would become the sandbox user: --workspace /etc must not
    # hand root's files to sandboxed code.
    for d in ("/etc", str(tmp_path)):
        p = box(state_dir, "--workspace", d, "--", "true")
        assert p.returncode == 125
        assert b"system account" in p.stderr


def test_deep_workspace_tree_is_removed(state_dir):
    # Nesting far deeper than any removal recursion must not leave the
    # throwaway workspace behind.
    box(state_dir, "--", "sh", "-c", "d=.; for i in $(seq 700); do d=$d/d; done; mkdir -p $d; "
        "chmod 000 d/d/d", check=0)
    assert os.listdir(os.path.join(state_dir, "workspaces")) == []


def test_fresh_workspace_is_empty_and_removed(state_dir):
    before = set(os.listdir(os.path.join(state_dir, "workspaces")))
    p = box(state_dir, "--", "sh", "-c", "ls -A /workspace; echo x > /workspace/f", check=0)
    assert p.stdout == b""
    assert set(os.listdir(os.path.join(state_dir, "workspaces"))) == before


def test_workdir(state_dir, tmp_path):
    ws = user_dir(tmp_path / "w")
    user_dir(ws / "sub")
    p = box(state_dir, "--workspace", str(ws), "--workdir", "/workspace/sub", "--", "pwd",
            check=0)
    assert p.stdout == b"/workspace/sub\n"
    p = box(state_dir, "--workdir", "/nonexistent", "--", "pwd")
    assert p.returncode == 125
    assert b"workdir /nonexistent" in p.stderr


def test_timeout_keeps_output_and_answers(state_dir, tmp_path):
    res = tmp_path / "r.json"
    p = box(state_dir, "--timeout", "500ms", "--result-json", str(res), "--", "sh", "-c",
            "echo before; sleep 30; echo after")
    assert p.returncode == 124
    assert p.stdout == b"before\n"
    assert b"timed out" in p.stderr
    r = json.loads(res.read_text())
    assert r["timed_out"] is True and r["signal"] == 9 and r["exit_code"] is None


def test_result_json(state_dir, tmp_path):
    res = tmp_path / "r.json"
    box(state_dir, "--result-json", str(res), "--", "sh", "-c", "printf abc; exit 2")
    r = json.loads(res.read_text())
    assert r["exit_code"] == 2 and r["signal"] == 0
    assert r["stdout_bytes"] == 3 and r["stderr_bytes"] == 0
    assert r["timed_out"] is False and r["oom_killed"] is False
    assert r["stdout_truncated"] is False
    assert r["duration_ms"] >= 0 and r["max_rss_kb"] > 0


def test_help_and_bad_options():
    p = subprocess.run([CELLA, "box", "--help"], capture_output=True)
    assert p.returncode == 0
    for word in (b"--memory-mb", b"--timeout", b"--workspace", b"Exit status", b"124"):
        assert word in p.stdout
    p = subprocess.run([CELLA, "box", "--memory-mb", "lots", "true"], capture_output=True)
    assert p.returncode == 125
    assert b"--memory-mb" in p.stderr and b"cella box --help" in p.stderr
    p = subprocess.run([CELLA, "box", "--nope", "true"], capture_output=True)
    assert p.returncode == 125 and b"unknown option '--nope'" in p.stderr
    p = subprocess.run([CELLA, "box"], capture_output=True)
    assert p.returncode == 125 and b"no command" in p.stderr
    p = subprocess.run([CELLA, "box", "--image", "ubuntu", "true"], capture_output=True)
    assert p.returncode == 125 and b"unknown image 'ubuntu'" in p.stderr
    p = subprocess.run([CELLA, "nope"], capture_output=True)
    assert p.returncode == 2
    # The agent is embedded and never reachable as a subcommand.
    p = subprocess.run([CELLA, "__agent"], capture_output=True)
    assert p.returncode == 2 and b"unknown command" in p.stderr


def test_serve_refuses_unknown_options():
    p = subprocess.run([CELLA, "serve", "--nope"], capture_output=True)
    assert p.returncode == 2 and b"unknown option '--nope'" in p.stderr


def test_each_sandbox_gets_its_own_uid_range(state_dir):
    # Several at once: all alive together, so their slots must differ.
    out = []

    def run():
        p = box(state_dir, "--", "sh", "-c", "cat /proc/self/uid_map; sleep 1", check=0)
        out.append(p.stdout.split())

    ts = [threading.Thread(target=run) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    bases = {int(m[1]) for m in out}
    assert len(bases) == 4
    for m in out:
        assert m[0] == b"0" and m[2] == b"65536"
        assert int(m[1]) >= 65536     # never a real user's id


def test_sandboxes_cannot_reach_each_other(state_dir):
    # One sandbox listens on an abstract socket and writes /dev/shm; another
    # must see neither.
    server = subprocess.Popen(
        [CELLA, "box", "--timeout", "20s", "--", "python3", "-c",
         "import socket,time,sys\n"
         "s=socket.socket(socket.AF_UNIX); s.bind('\\0cella-e2e-cross'); s.listen()\n"
         "open('/dev/shm/cella-e2e-cross','w').write('x')\n"
         "print('ready', flush=True); time.sleep(15)"],
        stdout=subprocess.PIPE, env={**os.environ, "CELLA_STATE_DIR": state_dir})
    try:
        assert server.stdout.readline() == b"ready\n"
        p = box(state_dir, "--", "python3", "-c",
                "import socket,os\n"
                "s=socket.socket(socket.AF_UNIX)\n"
                "try:\n s.connect('\\0cella-e2e-cross'); print('connected')\n"
                "except OSError as e: print('refused')\n"
                "print(os.path.exists('/dev/shm/cella-e2e-cross'))", check=0)
        assert p.stdout == b"refused\nFalse\n"
    finally:
        server.terminate()
        server.wait()


def test_nothing_is_left_behind(state_dir):
    mounts_before = open("/proc/self/mountinfo").read()
    box(state_dir, "--", "sh", "-c", "sleep 0.1 & echo hi", check=0)
    assert open("/proc/self/mountinfo").read() == mounts_before
    assert cella_cgroups() == []
    # No uid slot is still held: every lock can be taken.
    import fcntl
    slots = "/run/cella/uid-slots"
    for name in os.listdir(slots):
        with open(os.path.join(slots, name)) as f:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_interrupt_tears_the_sandbox_down(state_dir):
    import signal
    import time
    p = subprocess.Popen([CELLA, "box", "--", "sh", "-c", "echo up; sleep 1000.4242"],
                         stdout=subprocess.PIPE, env={**os.environ, "CELLA_STATE_DIR": state_dir})
    assert p.stdout.readline() == b"up\n"
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=30) == 128 + signal.SIGINT
    from conftest import host_processes_matching
    assert host_processes_matching(r"sleep 1000\.4242") == []
    assert cella_cgroups() == []


def test_sigkilled_run_is_cleaned_up_by_the_next(state_dir):
    # SIGKILL leaves cella no chance to clean up: the agent dies with its
    # socket, and the next run reclaims the cgroup and the workspace.
    import signal
    p = subprocess.Popen([CELLA, "box", "--", "sh", "-c", "echo up; sleep 1000.5151"],
                         stdout=subprocess.PIPE, env={**os.environ, "CELLA_STATE_DIR": state_dir})
    assert p.stdout.readline() == b"up\n"
    p.send_signal(signal.SIGKILL)
    p.wait()
    box(state_dir, "--", "true", check=0)
    from conftest import host_processes_matching
    assert host_processes_matching(r"sleep 1000\.5151") == []
    assert cella_cgroups() == []
    assert os.listdir(os.path.join(state_dir, "workspaces")) == []
