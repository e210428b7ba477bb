"""Known ways out through descriptors and the file system: descriptors of the
daemon leaked into a sandbox (the CVE-2024-21626 class: a leaked directory
descriptor as the working directory of a command is a way out of the root),
working-directory tricks through the exec API, setuid binaries of the host
image, writable host paths, and hard links to read-only files."""
import os

import pytest

from adv import ALICE, agent_of, assert_held, attack, two_tenants

SETID_BINARIES = sorted(
    os.path.join(r, f) for top in ("/usr/bin", "/usr/sbin", "/usr/lib")
    for r, _, fs in os.walk(top) for f in fs
    if os.path.isfile(os.path.join(r, f)) and not os.path.islink(os.path.join(r, f))
    and os.stat(os.path.join(r, f)).st_mode & 0o6000)


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    daemon = two_tenants(tmp_path_factory, "adv-files")
    yield daemon
    daemon.close()


@pytest.fixture
def sid(d):
    s = d.create("python", token=ALICE)
    yield s
    d.delete(f"/v1/sandboxes/{s}", token=ALICE)


def test_no_daemon_descriptor_reaches_a_command(d, sid):
    v = attack(d, sid, r'''
import stat
for fd in range(0, 1024):
    try:
        st = os.fstat(fd)
    except OSError:
        continue
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError as e:
        target = "?"
    if fd <= 2:
        held(f"fd {fd} is a pipe or /dev/null", target.startswith("pipe:") or target == "/dev/null",
             target)
    else:
        R[f"fd {fd}"] = f"ESCAPED: inherited descriptor {fd} -> {target}"
done()
''')
    assert_held(v, 3)


def test_agent_holds_no_host_directory_or_file(d, sid):
    # What the agent holds could be taken over by anything that reaches it:
    # only its socket, its signalfd, /dev/null and the pipes of running
    # commands; never a directory or a file of the host.
    # The agent of a ready sandbox, that is: one still being set up holds
    # its workspace and the daemon's working directory until it pivots,
    # before any code of the sandbox's runs.
    st, b = d.exec(sid, token=ALICE, cmd="true")
    assert st == 200 and b["exit_code"] == 0, b
    bad = []
    for pid in [agent_of(d, sid)]:
        assert pid, "no agent has this sandbox's workspace mounted"
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith(("socket:", "pipe:", "anon_inode:")):
                continue
            if target in ("/null", "/dev/null"):   # /null: opened before pivot_root
                st = os.stat(f"/proc/{pid}/fd/{fd}")
                if os.major(st.st_rdev) == 1 and os.minor(st.st_rdev) == 3:
                    continue
            bad.append(f"agent {pid} fd {fd} -> {target}")
        for link in ("cwd", "root"):
            target = os.readlink(f"/proc/{pid}/{link}")
            if target != "/":
                bad.append(f"agent {pid} {link} -> {target}")
    assert not bad, "ESCAPED (daemon-side descriptors in the agent):\n" + "\n".join(bad)


WORKDIR_TRICKS = ["/proc/self/fd/%d" % n for n in range(0, 12)] + [
    "/proc/1/cwd", "/proc/1/root", "/proc/self/root/..", "/proc/thread-self/fd/3",
    "/proc/self/cwd/../../..", "/../../..", "/workspace/../../..", "/workspace/link-to-fd",
    "/workspace/link-to-agent-root"]


def test_workdir_cannot_leave_the_root(d, sid):
    # CVE-2024-21626: the runtime chdir'd into a descriptor it still held.
    # Every such path as an exec's working directory must either be refused
    # or land inside the sandbox's root.
    st, b = d.exec(sid, token=ALICE, cmd="sh", args=[
        "-c", "ln -s /proc/self/fd/3 link-to-fd && ln -s /proc/1/root link-to-agent-root"])
    assert st == 200 and b["exit_code"] == 0, b
    escaped = []
    for wd in WORKDIR_TRICKS:
        st, b = d.exec(sid, token=ALICE, workdir=wd, cmd="python3", args=[
            "-c", "import os; print(os.getcwd()); print(os.path.realpath('..'));"
                  "print(sorted(os.listdir('/')))"])
        if st != 200 or b.get("exit_code") != 0:
            continue   # refused: what should happen
        cwd, parent, _ = b["stdout"].splitlines()
        if "unreachable" in cwd or "unreachable" in parent:
            escaped.append(f"workdir {wd}: cwd {cwd!r} is outside the root")
    assert not escaped, "ESCAPED:\n" + "\n".join(escaped)


@pytest.mark.skipif(not SETID_BINARIES, reason="the host image has no setuid binary")
def test_setuid_binaries_of_the_image_give_nothing(d, sid):
    # The image is the host's /usr, with its setuid binaries (su, passwd,
    # mount...). Run each with LD_SHOW_AUXV: the loader prints the ids the
    # kernel gave it, and a real setuid exec (AT_SECURE) would drop that
    # variable and print nothing.
    v = attack(d, sid, r'''
import subprocess
for path in %r:
    if not os.path.exists(path):
        continue
    st = os.stat(path)
    vfs = os.statvfs(path)
    held(f"{path} is on a nosuid mount", vfs.f_flag & os.ST_NOSUID, "suid mount")
    try:
        p = subprocess.run([path, "--help"], env={"LD_SHOW_AUXV": "1"}, capture_output=True,
                           text=True, timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        R[f"{path} runs without privilege"] = "held"
        continue
    aux = dict(l.split(":", 1) for l in p.stdout.splitlines() if l.startswith("AT_"))
    aux = {k: v.strip() for k, v in aux.items()}
    held(f"{path} runs without privilege",
         aux.get("AT_SECURE") == "0" and aux.get("AT_EUID") == "1000" and aux.get("AT_EGID") == "1000",
         f"auxv {aux} (owner {st.st_uid}:{st.st_gid})")
held("no_new_privs is set", "NoNewPrivs:\t1" in open("/proc/self/status").read(), "not set")
done()
''' % (SETID_BINARIES,))
    assert_held(v, len(SETID_BINARIES))


def test_no_host_path_is_writable(d, sid):
    v = attack(d, sid, r'''
OWN = ("/tmp", "/workspace", "/dev/shm", "/var/inputs", "/var/outputs", "/proc", "/dev/pts")
seen = 0
for top in ("/", "/usr", "/etc", "/dev", "/var", "/usr/lib", "/usr/local", "/usr/share"):
    for root, dirs, files in os.walk(top):
        if root.startswith(OWN) and root not in ("/",):
            dirs[:] = []
            continue
        dirs[:] = [x for x in dirs if not os.path.join(root, x).startswith(OWN)]
        if root.count("/") > 3:
            dirs[:] = []
        seen += 1
        p = os.path.join(root, ".adv-probe")
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.close(fd)
            os.unlink(p)
            R[f"create in {root}"] = "ESCAPED: created a file"
        except OSError:
            pass
        for f in files[:3]:   # a few existing files per directory
            fp = os.path.join(root, f)
            try:
                fd = os.open(fp, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
                os.close(fd)
                if not os.path.realpath(fp).startswith(("/dev/", "/proc/")):
                    R[f"write {fp}"] = "ESCAPED: opened for writing"
            except OSError:
                pass
held(f"walked {seen} host directories", seen > 200, f"only {seen}")
done()
''')
    assert_held(v, 1)


def test_hard_links_to_read_only_files_are_refused(d, sid, tmp_path):
    v = attack(d, sid, r'''
AT_FDCWD, AT_SYMLINK_FOLLOW, AT_EMPTY_PATH = -100, 0x400, 0x1000
for src in ("/usr/bin/python3", "/etc/ld.so.cache", "/usr/lib/os-release"):
    for dst in ("/workspace/hl", "/tmp/hl", "/dev/shm/hl"):
        try:
            os.link(src, dst, follow_symlinks=False)
            R[f"link {src} -> {dst}"] = "ESCAPED: linked"
            os.unlink(dst)
        except OSError as e:
            held(f"link {src} -> {dst}", e.errno in (errno.EXDEV, errno.EPERM), ename(e.errno))
    # Through a descriptor: linkat(fd, "", AT_EMPTY_PATH) and /proc/self/fd.
    fd = os.open(src, os.O_RDONLY)
    refused(f"linkat(AT_EMPTY_PATH) {src}",
            sc(265, fd, b"", AT_FDCWD, b"/workspace/hl2", AT_EMPTY_PATH),
            (errno.EXDEV, errno.EPERM, errno.ENOENT))
    refused(f"linkat(/proc/self/fd) {src}",
            sc(265, AT_FDCWD, f"/proc/self/fd/{fd}".encode(), AT_FDCWD, b"/workspace/hl3",
               AT_SYMLINK_FOLLOW), (errno.EXDEV, errno.EPERM, errno.ENOENT))
    os.close(fd)
# Links inside the workspace still work (tools rely on them).
open("/workspace/a", "w").write("a")
os.link("/workspace/a", "/workspace/b")
held("links inside the workspace work", os.stat("/workspace/b").st_nlink == 2, "no link")
done()
''')
    assert_held(v, 16)
    # On the host, nothing in any workspace is a host file.
    host = {(os.stat(p).st_dev, os.stat(p).st_ino) for p in
            ("/usr/bin/python3", "/etc/ld.so.cache", "/usr/lib/os-release")}
    for root, _, files in os.walk(os.path.join(d.state_dir, "workspaces")):
        for f in files:
            st = os.lstat(os.path.join(root, f))
            assert (st.st_dev, st.st_ino) not in host, f"ESCAPED: {root}/{f} is a host file"


def test_no_file_capability_or_trusted_xattr_reaches_the_disk(d, sid):
    # Workspace files live on the host's disk: a file capability (or a
    # setuid bit) set inside would be a privileged program outside.
    v = attack(d, sid, r'''
import struct
open("/workspace/capped", "w").write("#!/bin/sh\n")
os.chmod("/workspace/capped", 0o755)
# VFS_CAP_REVISION_2, effective, CAP_SETUID permitted.
cap = struct.pack("<IIIII", 0x02000001, 1 << 7, 0, 0, 0)
cap3 = struct.pack("<IIIIII", 0x03000001, 1 << 7, 0, 0, 0, 0)
for name, val in (("security.capability", cap), ("security.capability v3", cap3),
                  ("trusted.adv", b"x"), ("security.adv", b"x")):
    try:
        os.setxattr("/workspace/capped", name.split()[0], val)
        R[f"setxattr {name}"] = "ESCAPED: set"
    except OSError as e:
        held(f"setxattr {name}", e.errno in (errno.EPERM, errno.EOPNOTSUPP, errno.EACCES), ename(e.errno))
try:
    os.setxattr("/workspace/capped", "user.adv", b"x")   # plain user xattrs still work
    R["user xattr"] = "held"
except OSError as e:
    R["user xattr"] = "held" if e.errno == errno.EOPNOTSUPP else "ESCAPED? " + ename(e.errno)
done()
''')
    assert_held(v, 5)
    path = os.path.join(d.state_dir, "workspaces", sid, "capped")
    assert os.path.exists(path), "the workspace is not where the daemon keeps it"
    assert "security.capability" not in os.listxattr(path), "ESCAPED: a file capability on disk"
    assert not os.stat(path).st_mode & 0o6000


def test_file_operations_cannot_be_entered(d, sid):
    # File operations run in children of the agent, with the agent's code
    # (no exec): the nearest thing to `runc exec` entering a container
    # (CVE-2019-5736, CVE-2016-9962). While many run, a scanner in the
    # sandbox looks for them and tries their /proc entries.
    import threading
    out = {}
    scanner = r'''
import time
me = os.getpid()
seen, t_end = set(), time.time() + 4
while time.time() < t_end:
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == me or p in seen:
            continue
        try:
            exe = os.readlink(f"/proc/{p}/exe")
        except OSError:
            continue
        seen.add(p)
        if "cella-agent" in exe or "memfd" in exe:
            R[f"pid {p} ({exe})"] = "ESCAPED: an agent process is visible"
            for f in ("mem", "exe", "fd/3"):
                try:
                    os.open(f"/proc/{p}/{f}", os.O_RDWR if f == "mem" else os.O_RDONLY)
                    R[f"pid {p} {f}"] = "ESCAPED: opened"
                except OSError:
                    pass
R["scanned"] = "held"
done()
'''
    t = threading.Thread(target=lambda: out.update(v=attack(d, sid, scanner)))
    t.start()
    blob = os.urandom(4 << 20)
    n = 0
    while t.is_alive() and n < 200:
        st, _ = d.request("PUT", f"/v1/sandboxes/{sid}/files/workspace/blob{n % 3}", raw=blob,
                          token=ALICE)
        assert st in (200, 201, 204), st
        st, _ = d.post(f"/v1/sandboxes/{sid}/fs/ls", {"path": "/workspace"}, token=ALICE)
        assert st == 200
        n += 1
    t.join(120)
    assert n >= 3, "too few file operations ran during the scan"
    assert_held(out["v"], 1)
