"""Limits under attack: fork bombs, memory bombs, output floods, CPU spins,
sleeping children and /tmp fills must all end cleanly, reported, and leave
nothing behind (DESIGN rules 8 and 9)."""
import json
import os
import subprocess

from conftest import CELLA, box, cella_cgroups, host_processes_matching


def test_fork_bomb_is_stopped_by_the_process_cap(state_dir, tmp_path):
    # Forks until the kernel refuses, holding every child, then reports.
    script = (
        "import os, time\n"
        "n = 0\n"
        "try:\n"
        "    while True:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60); os._exit(0)\n"
        "        n += 1\n"
        "except OSError as e:\n"
        "    print(n, e.errno)\n")
    p = box(state_dir, "--pids", "32", "--timeout", "60s", "--", "python3", "-c", script, check=0)
    n, errno = map(int, p.stdout.split())
    assert errno == 11          # EAGAIN: the pids cgroup said no
    assert 0 < n < 32
    assert cella_cgroups() == []


def test_shell_fork_bomb_ends_at_the_timeout(state_dir):
    p = box(state_dir, "--pids", "64", "--timeout", "2s", "--", "bash", "-c",
            "b() { b | b & }; b; wait")
    assert p.returncode in (124, 0, 1, 2, 254)   # killed at the timeout, or the shell gave up
    assert cella_cgroups() == []


def test_memory_bomb_is_oom_killed_and_reported(state_dir, tmp_path):
    res = tmp_path / "r.json"
    p = box(state_dir, "--memory-mb", "64", "--result-json", str(res), "--", "python3", "-c",
            "x = b'x' * (512 << 20)")
    assert p.returncode == 137
    assert b"out of memory" in p.stderr
    r = json.loads(res.read_text())
    assert r["oom_killed"] is True and r["signal"] == 9


def test_memory_below_the_limit_is_fine(state_dir):
    p = box(state_dir, "--memory-mb", "128", "--", "python3", "-c",
            "x = b'x' * (32 << 20); print(len(x))", check=0)
    assert p.stdout == b"33554432\n"


def test_output_flood_is_capped_with_flat_memory(state_dir, tmp_path):
    res = tmp_path / "r.json"
    proc = subprocess.Popen(
        [CELLA, "box", "--result-json", str(res), "--", "head", "-c", "1G", "/dev/zero"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        env={**os.environ, "CELLA_STATE_DIR": state_dir})
    got = 0
    while chunk := proc.stdout.read(1 << 16):
        got += len(chunk)
    err = proc.stderr.read()
    _, status, rusage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0
    assert got == 1 << 20                      # 1 MiB kept
    assert b"stdout truncated" in err
    r = json.loads(res.read_text())
    assert r["stdout_bytes"] == 1 << 30        # all of it was produced and counted
    assert r["stdout_truncated"] is True
    # cella (and the agent it waited for) stayed small while 1 GiB went by.
    assert rusage.ru_maxrss < 64 * 1024, f"max RSS {rusage.ru_maxrss} KiB"


def test_output_limit_option(state_dir):
    p = box(state_dir, "--output-limit", "10", "--", "sh", "-c",
            "echo 0123456789abcdef; echo 0123456789abcdef >&2")
    assert p.returncode == 0
    assert p.stdout == b"0123456789"
    assert p.stderr.startswith(b"0123456789cella")


def test_cpu_spin_ends_at_the_timeout(state_dir):
    p = box(state_dir, "--timeout", "1s", "--cpus", "0.5", "--", "sh", "-c", "while :; do :; done")
    assert p.returncode == 124


def test_timeout_kills_the_whole_process_group(state_dir):
    p = box(state_dir, "--timeout", "1s", "--", "sh", "-c",
            "sleep 1000.1717 & sleep 1000.1717 & wait")
    assert p.returncode == 124
    assert host_processes_matching(r"sleep 1000\.1717") == []


def test_background_child_is_gone_afterwards(state_dir):
    p = box(state_dir, "--", "sh", "-c", "nohup sleep 1000.2323 >/dev/null 2>&1 & echo started",
            check=0)
    assert p.stdout == b"started\n"
    assert host_processes_matching(r"sleep 1000\.2323") == []
    assert cella_cgroups() == []


def test_tmp_cannot_exceed_its_size(state_dir):
    p = box(state_dir, "--tmp-mb", "8", "--", "sh", "-c",
            "head -c 32M /dev/zero > /tmp/fill; echo rc=$?; du -k /tmp/fill")
    out = p.stdout.decode().split()
    assert out[0] != "rc=0"
    assert b"No space left on device" in p.stderr
    assert int(out[1]) <= 8 * 1024


def test_per_user_kernel_counts_are_the_sandboxs_own(state_dir):
    # inotify instances are counted per user up the namespace chain: a
    # sandbox taking all of its allowance must leave host root's untouched.
    import ctypes
    hold = ("import ctypes, time\n"
            "libc = ctypes.CDLL(None)\n"
            "fds = [libc.inotify_init() for _ in range(10000)]\n"
            "print(sum(fd >= 0 for fd in fds), flush=True); time.sleep(30)")
    p = subprocess.Popen([CELLA, "box", "--timeout", "40s", "--", "python3", "-c", hold],
                         stdout=subprocess.PIPE, env={**os.environ, "CELLA_STATE_DIR": state_dir})
    try:
        held = int(p.stdout.readline())
        assert held > 0
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init()
        assert fd >= 0, f"host root could not get an inotify instance (errno {ctypes.get_errno()})"
        os.close(fd)
    finally:
        p.terminate()
        p.wait()


def test_many_sandboxes_in_a_row_leave_nothing(state_dir):
    for _ in range(20):
        box(state_dir, "--", "true", check=0)
    assert cella_cgroups() == []
    assert os.listdir(os.path.join(state_dir, "workspaces")) == []
