"""Known ways out of Linux sandboxes through the kernel, each tried from
inside a sandbox of a live daemon (warm-pool sandboxes, as clients get them):
cgroup v1 release_agent / notify_on_release (and its cousins core_pattern
and binfmt_misc), overwriting /proc/self/exe, ptrace of the agent, signals to
the agent (PID 1), TIOCSTI, keyrings, userfaultfd, io_uring and bpf.

tests/probe checks that each forbidden syscall answers the filter's errno
with harmless arguments; these tests make the real attack (a real BPF
program, a real controlling terminal, a cgroup mount with a release agent)
and then check on the host that nothing changed."""
import fcntl
import json
import os
import pty
import signal
import subprocess
import termios

import pytest

from adv import ALICE, PRELUDE, agent_of, agents_of, gone, assert_held, attack, two_tenants
from conftest import CELLA

V1_ROOTS = [f"/sys/fs/cgroup/{c}" for c in ("memory", "pids", "cpu")
            if os.path.exists(f"/sys/fs/cgroup/{c}/release_agent")]


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    daemon = two_tenants(tmp_path_factory, "adv-kernel")
    yield daemon
    daemon.close()


@pytest.fixture
def sid(d):
    s = d.create("python", token=ALICE)
    yield s
    d.delete(f"/v1/sandboxes/{s}", token=ALICE)


def read(path):
    with open(path) as f:
        return f.read()


def test_cgroup_release_agent_and_notify_on_release(d, sid):
    before = {r: read(f"{r}/release_agent") for r in V1_ROOTS}
    v = attack(d, sid, r'''
import errno
os.makedirs("/tmp/cg", exist_ok=True)
# The 2019 "release_agent" escape: mount a v1 hierarchy, set notify_on_release
# in a child cgroup and point release_agent at a script. Every way to a
# cgroup file system must be shut.
for opts in (b"memory", b"pids", b"cpu", b"rdma", b"none,name=escape", b""):
    refused(f"mount cgroup v1 ({opts.decode() or 'all'})",
            (libc.mount(b"cgroup", b"/tmp/cg", b"cgroup", 0, opts or None), ctypes.get_errno()))
refused("mount cgroup2", (libc.mount(b"cgroup2", b"/tmp/cg", b"cgroup2", 0, None), ctypes.get_errno()))
refused("fsopen(cgroup)", sc(430, b"cgroup", 0))
# The kernel's answer to CVE-2022-0492 needs CAP_SYS_ADMIN in the initial
# user namespace; a new one must not even be made.
refused("unshare(USER|NS|CGROUP)", sc(272, 0x10000000 | 0x00020000 | 0x02000000))
mounts = open("/proc/self/mountinfo").read()
held("no cgroup file system is mounted", " cgroup" not in mounts, mounts)
held("/sys is absent", not os.path.exists("/sys"), str(os.listdir("/sys")) if os.path.exists("/sys") else "")
cg = open("/proc/self/cgroup").read().split()
held("cgroup paths are namespaced to /", all(l.endswith(":/") for l in cg), " ".join(cg))
# The other "run a host program as root" knobs: core_pattern, modprobe,
# uevent_helper, binfmt_misc.
for k in ("/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe",
          "/proc/sys/kernel/hotplug", "/sys/kernel/uevent_helper",
          "/proc/sys/fs/binfmt_misc/register"):
    try:
        fd = os.open(k, os.O_WRONLY)
        R[f"{k} is not writable"] = "ESCAPED: opened for writing"
        os.close(fd)
    except OSError as e:
        R[f"{k} is not writable"] = "held"
done()
''')
    assert_held(v, 10)
    # On the host: the hierarchies' release agents are as they were, and the
    # sandbox's own cgroups cannot be told to notify (root owns them, and
    # nothing mapped into the sandbox may write them).
    assert {r: read(f"{r}/release_agent") for r in V1_ROOTS} == before
    pid = agent_of(d, sid)
    assert pid
    host_uid = os.stat(f"/proc/{pid}").st_uid
    checked = 0
    for line in read(f"/proc/{pid}/cgroup").splitlines():
        _, ctrls, path = line.split(":", 2)
        for c in ctrls.split(","):
            cg = f"/sys/fs/cgroup/{c}{path}"
            if c not in ("memory", "pids", "cpu") or not os.path.isdir(cg):
                continue
            checked += 1
            assert read(f"{cg}/notify_on_release").strip() == "0", cg
            for f in (cg, f"{cg}/notify_on_release", f"{cg}/cgroup.procs", f"{cg}/tasks"):
                st = os.stat(f)
                assert st.st_uid != host_uid and st.st_gid != host_uid, \
                    f"ESCAPED: {f} belongs to the sandbox's host uid {host_uid}"
                assert not st.st_mode & 0o022, f"ESCAPED: {f} is writable by others"
    assert checked == len(V1_ROOTS), f"found {checked} of the sandbox's v1 cgroups"


def test_a_crash_runs_no_host_core_helper(d, sid):
    # A core_pattern that pipes (systemd-coredump, apport) runs its helper as
    # root on the host, outside the sandbox's cgroup, for every crash, and
    # RLIMIT_CORE 0 does not stop it: the kernel ignores the limit for pipes
    # except the value 1, which it refuses to dump at all. So a sandbox
    # gets 1, and cannot change it (lowering it to 0 would open the pipe
    # again). This host's core_pattern need not be a pipe: the limit is what
    # is checked, and that a crash leaves no core file.
    v = attack(d, sid, r'''
import resource, signal, subprocess
lim = resource.getrlimit(resource.RLIMIT_CORE)
held("RLIMIT_CORE is 1 (no core dump, piped or not)", lim == (1, 1), f"it is {lim}")
for new in ((0, 0), (0, 1), (1, 0)):
    try:
        resource.setrlimit(resource.RLIMIT_CORE, new)
        R[f"setrlimit(CORE, {new})"] = f"ESCAPED: now {resource.getrlimit(resource.RLIMIT_CORE)}"
    except (OSError, ValueError):
        R[f"setrlimit(CORE, {new})"] = "held"
new = (ctypes.c_ulong * 2)(0, 0)
refused("prlimit(self, CORE, 0)", sc(302, 0, 4, new, 0))
refused("prlimit(self, CORE | 1 << 32, 0)", sc(302, 0, 4 | (1 << 32), new, 0))
refused("setrlimit(CORE | 1 << 32, 0)", sc(160, 4 | (1 << 32), new))
refused("prlimit(agent, CORE, 0)", sc(302, 1, 4, new, 0), (errno.EPERM, errno.ESRCH))
old = (ctypes.c_ulong * 2)()
held("reading the limit still works", sc(302, 0, 4, 0, old)[0] == 0 and list(old) == [1, 1],
     str(list(old)))
out = subprocess.run(["bash", "-c", "ulimit -c"], capture_output=True, text=True).stdout
held("ulimit -c reads 0 blocks", out.strip() == "0", out)
os.chdir("/workspace")
p = subprocess.run(["python3", "-c", "import os; os.abort()"])
held("a crash is a crash", p.returncode == -signal.SIGABRT, str(p.returncode))
held("a crash leaves no core file", not [f for f in os.listdir(".") if f.startswith("core")],
     str(os.listdir(".")))
done()
''')
    assert_held(v, 11)


def test_proc_self_exe_cannot_be_overwritten(d, sid):
    v = attack(d, sid, r'''
import glob
# CVE-2019-5736: a process opens its own (or the runtime's) executable through
# /proc and writes it. Here every executable is on a read-only mount, and the
# agent's is a sealed memfd the sandbox cannot open.
for p in ["/proc/self/exe"] + glob.glob("/proc/[0-9]*/exe"):
    for how in (os.O_WRONLY, os.O_RDWR, os.O_WRONLY | os.O_TRUNC):
        try:
            fd = os.open(p, how)
            R[f"open {p} for writing ({how})"] = f"ESCAPED: opened -> {os.readlink(p)}"
            os.close(fd)
        except OSError as e:
            R[f"open {p} for writing ({how})"] = "held"
# Reopening a read-only descriptor of the binary for writing through /proc.
fd = os.open("/proc/self/exe", os.O_RDONLY | os.O_PATH)
try:
    w = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY)
    R["reopen the exe descriptor for writing"] = "ESCAPED: reopened"
except OSError as e:
    R["reopen the exe descriptor for writing"] = "held"
import sys
try:
    w = os.open(os.path.realpath(sys.executable), os.O_WRONLY)
    R["write the interpreter binary"] = "ESCAPED: opened"
except OSError:
    R["write the interpreter binary"] = "held"
held("the agent's executable is not visible", not os.path.exists("/proc/1/exe"),
     "/proc/1/exe exists")
done()
''')
    assert_held(v, 5)
    # The agent runs from a memfd sealed against every change.
    for pid in agents_of(d):
        try:
            fd = os.open(f"/proc/{pid}/exe", os.O_RDONLY)
        except OSError as e:
            if gone(e):
                continue
            raise
        try:
            seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
        finally:
            os.close(fd)
        want = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL
        assert seals & want == want, f"ESCAPED: agent {pid}'s executable has seals {seals:#x}"


def test_agent_cannot_be_traced(d, sid):
    v = attack(d, sid, r'''
PTRACE_ATTACH, PTRACE_SEIZE = 16, 0x4206
refused("ptrace(ATTACH, agent)", sc(101, PTRACE_ATTACH, 1, 0, 0))
refused("ptrace(SEIZE, agent)", sc(101, PTRACE_SEIZE, 1, 0, 0))
buf = ctypes.create_string_buffer(64)
iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)
refused("process_vm_readv(agent)", sc(310, 1, iov, 1, iov, 1, 0))
refused("process_vm_writev(agent)", sc(311, 1, iov, 1, iov, 1, 0))
for f in ("mem", "environ", "root", "cwd", "fd", "maps", "syscall"):
    try:
        os.open(f"/proc/1/{f}", os.O_RDONLY)
        R[f"/proc/1/{f}"] = "ESCAPED: opened"
    except OSError:
        R[f"/proc/1/{f}"] = "held"
pfd, e = sc(434, 1, 0)              # pidfd_open(1)
held("pidfd of the agent", pfd < 0 or sc(438, pfd, 3, 0)[0] < 0,
     "pidfd_getfd took the agent's socket")
done()
''')
    assert_held(v, 8)


def test_signals_to_the_agent_change_nothing(d, sid):
    agent = agent_of(d, sid)
    assert agent
    v = attack(d, sid, r'''
import signal
for s in range(1, 65):
    if s in (32, 33):     # glibc's own
        continue
    refused(f"kill(1, {s})", (libc.kill(1, s), ctypes.get_errno()), (errno.EPERM, errno.ESRCH))
info = ctypes.create_string_buffer(128)
refused("rt_sigqueueinfo(1, SIGCHLD) (a forged child exit)", sc(129, 1, 17, info),
        (errno.EPERM, errno.ESRCH))
refused("setpriority(agent, 19)", sc(141, 0, 1, 19), (errno.EPERM, errno.EACCES, errno.ESRCH))
lim = (ctypes.c_ulong * 2)(0, 0)
refused("prlimit(agent, NOFILE, 0)", sc(302, 1, 7, lim, 0), (errno.EPERM, errno.ESRCH))
done()
''')
    assert_held(v, 60)
    # Every process the sandbox may signal, at once (this one too): the agent
    # must not be one of them.
    for sig in ("SIGTERM", "SIGKILL"):
        st, b = d.exec(sid, token=ALICE, cmd="sh", args=[
            "-c", f"sleep 30 & python3 -c 'import os, signal; os.kill(-1, signal.{sig})'"])
        assert st == 200 and b.get("signal") == getattr(signal, sig), (st, b)
    # The agent is the same process and still answers.
    assert agent_of(d, sid) == agent, "the agent was replaced or is gone"
    st, b = d.exec(sid, token=ALICE, cmd="echo", args=["alive"])
    assert st == 200 and b["stdout"] == "alive\n", (st, b)


def test_tiocsti_reaches_no_terminal(d, sid):
    v = attack(d, sid, r'''
import fcntl, termios
TIOCSTI = termios.TIOCSTI
stat = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
held("no controlling terminal", stat[4] == "0", f"tty_nr {stat[4]}")
try:
    os.open("/dev/tty", os.O_RDWR)
    R["/dev/tty opens"] = "ESCAPED: a controlling terminal is reachable"
except OSError:
    R["/dev/tty opens"] = "held"
# A terminal of the sandbox's own, made its controlling one: even there,
# pushing input is refused (it would be the classic sudo/su escape).
m, s = os.openpty()
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    fcntl.ioctl(s, termios.TIOCSCTTY, 0)
    out = {}
    c = ctypes.c_char(b"x")
    for name, cmd in (("TIOCSTI", TIOCSTI), ("TIOCSTI with high bits", TIOCSTI | (1 << 32)),
                      ("TIOCLINUX", 0x541C)):
        out[name] = sc(16, s, cmd, ctypes.byref(c))
    os.write(w, json.dumps(out).encode())
    os._exit(0)
os.wait()
for name, res in json.loads(os.read(r, 4096)).items():
    refused(f"ioctl({name}) on the sandbox's own tty", tuple(res))
done()
''')
    assert_held(v, 5)


def test_keyrings_are_out_of_reach(d, sid):
    v = attack(d, sid, r'''
KEY_SPEC_SESSION, KEY_SPEC_USER = -3, -4
refused("keyctl(GET_KEYRING_ID, user)", sc(250, 0, KEY_SPEC_USER, 1))
refused("keyctl(JOIN_SESSION_KEYRING)", sc(250, 1, 0))
refused("keyctl(READ, user keyring)", sc(250, 11, KEY_SPEC_USER, 0, 0))
refused("add_key(user)", sc(248, b"user", b"adv", b"secret", 6, KEY_SPEC_SESSION))
refused("add_key(keyring)", sc(248, b"keyring", b"adv", 0, 0, KEY_SPEC_USER))
refused("request_key(user)", sc(249, b"user", b"adv", 0, 0))
held("/proc/keys shows nothing", open("/proc/keys").read() == "", "keys listed")
done()
''')
    assert_held(v, 7)


def test_userfaultfd_io_uring_bpf_are_refused(d, sid):
    v = attack(d, sid, r'''
import struct
refused("userfaultfd", sc(323, 0))
refused("userfaultfd(UFFD_USER_MODE_ONLY)", sc(323, 1))
held("/dev/userfaultfd is absent", not os.path.exists("/dev/userfaultfd"), "present")
params = ctypes.create_string_buffer(120)
refused("io_uring_setup", sc(425, 8, params))
refused("io_uring_enter", sc(426, 0, 1, 0, 0, 0, 0))
refused("io_uring_register", sc(427, 0, 0, 0, 0))
# A real socket-filter program: r0 = 0; exit.
insns = struct.pack("<BBhi", 0xb7, 0, 0, 0) + struct.pack("<BBhi", 0x95, 0, 0, 0)
ib = ctypes.create_string_buffer(insns, len(insns))
lic = ctypes.create_string_buffer(b"GPL")
attr = ctypes.create_string_buffer(struct.pack("<IIQQIIQ", 1, 2, ctypes.addressof(ib),
                                               ctypes.addressof(lic), 0, 0, 0).ljust(128, b"\0"))
refused("bpf(PROG_LOAD socket filter)", sc(321, 5, attr, 128))
mattr = ctypes.create_string_buffer(struct.pack("<IIII", 2, 4, 4, 1).ljust(128, b"\0"))
refused("bpf(MAP_CREATE array)", sc(321, 0, mattr, 128))
pattr = ctypes.create_string_buffer(128)
refused("perf_event_open", sc(298, pattr, 0, -1, -1, 0))
done()
''')
    assert_held(v, 9)


def test_cella_box_run_from_a_terminal_cannot_type_into_it(state_dir):
    # CVE-2017-5226 (bubblewrap): a sandbox started from a terminal pushed
    # keystrokes into it with TIOCSTI, run by the shell after the sandbox
    # ended. `cella box` run with a terminal as its stdio must hand the
    # sandbox none of it.
    code = PRELUDE + r'''
import fcntl, termios
for fd in (0, 1, 2):
    held(f"fd {fd} is not a terminal", not os.isatty(fd), os.ttyname(fd) if os.isatty(fd) else "")
    c = ctypes.c_char(b"x")
    r = sc(16, fd, termios.TIOCSTI, ctypes.byref(c))
    held(f"TIOCSTI on fd {fd}", r[0] < 0, "pushed a byte")
try:
    os.open("/dev/tty", os.O_RDWR)
    R["/dev/tty"] = "ESCAPED: the caller's terminal is reachable"
except OSError:
    R["/dev/tty"] = "held"
done()
'''
    master, slave = pty.openpty()
    env = dict(os.environ, CELLA_STATE_DIR=state_dir)
    p = subprocess.Popen([CELLA, "box", "--", "python3", "-c", code], stdin=slave, stdout=slave,
                         stderr=slave, env=env, start_new_session=True,
                         preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait(60)
    os.close(master)
    text = out.decode(errors="replace")
    line = [l for l in text.splitlines() if l.startswith("{")]
    assert line, text
    assert_held(json.loads(line[-1]), 7)


def has_cap(n):
    with open("/proc/self/status") as f:
        eff = [l for l in f if l.startswith("CapEff:")][0].split()[1]
    return bool(int(eff, 16) >> n & 1)


@pytest.mark.parametrize("hard", ["unlimited", "0"])
def test_core_limit_is_1_whatever_the_daemons_own(state_dir, hard):
    # The agent lowers RLIMIT_CORE to 1 itself; from a hard limit of 0 only
    # the daemon, as root with CAP_SYS_RESOURCE, can raise it (box.c).
    if hard == "0" and not has_cap(24):
        pytest.skip("raising a hard limit takes CAP_SYS_RESOURCE, which this root lacks")
    p = subprocess.run(["sh", "-c", f'ulimit -Sc 0; ulimit -Hc {hard}; exec "$0" box -- python3 -c '
                        '"import resource; print(resource.getrlimit(resource.RLIMIT_CORE))"',
                        CELLA], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, CELLA_STATE_DIR=state_dir))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "(1, 1)", f"ESCAPED: RLIMIT_CORE inside is {p.stdout.strip()}"
