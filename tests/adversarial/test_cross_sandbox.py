"""Two sandboxes of two tenants side by side: whatever the first one sets
up (an abstract unix socket, a socket file, /dev/shm, SysV IPC, POSIX
message queues, file locks and inotify watches on the read-only image they
share), the second must neither see it nor be blocked by it."""
import json
import threading
import uuid

import pytest

from adv import ALICE, BOB, assert_held, attack, two_tenants

MARK = uuid.uuid4().hex[:10]
KEY = int(MARK[:7], 16)
LOCKED = ("/usr/lib/os-release", "/etc/ld.so.cache", "/usr/bin/python3")

# Sets up everything, says so with /workspace/ready, and holds on until
# /workspace/stop appears (or 60 s pass).
HOLDER = r'''
import fcntl, socket, time
MARK, KEY = %r, %d
a = socket.socket(socket.AF_UNIX); a.bind("\0cella-adv-" + MARK); a.listen()
p = socket.socket(socket.AF_UNIX); p.bind("/tmp/adv-" + MARK + ".sock"); p.listen()
open("/dev/shm/adv-" + MARK, "w").write("secret")
held("shmget", libc.shmget(KEY, 4096, 0o1666) >= 0, ename(ctypes.get_errno()))   # IPC_CREAT
held("msgget", libc.msgget(KEY, 0o1666) >= 0, ename(ctypes.get_errno()))
held("semget", libc.semget(KEY, 1, 0o1666) >= 0, ename(ctypes.get_errno()))
rt = ctypes.CDLL("librt.so.1", use_errno=True)
held("mq_open", rt.mq_open(("/adv-" + MARK).encode(), os.O_CREAT | os.O_RDWR, 0o666, None) >= 0,
     ename(ctypes.get_errno()))
held_files = []
for path in %r:
    f = open(path, "rb")
    fcntl.flock(f, fcntl.LOCK_EX)
    # A shared fcntl lock is all a read-only descriptor allows.
    fcntl.lockf(f, fcntl.LOCK_SH)
    held_files.append(f)
open("/workspace/ready", "w").write(json.dumps(R))   # what was set up
deadline = time.time() + 60
while not os.path.exists("/workspace/stop") and time.time() < deadline:
    time.sleep(0.05)
done()
''' % (MARK, KEY, LOCKED)

PEEKER = r'''
import fcntl, socket, time
MARK, KEY = %r, %d
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0cella-adv-" + MARK)
    R["the other sandbox's abstract socket"] = "ESCAPED: connected"
except OSError as e:
    held("the other sandbox's abstract socket", e.errno == errno.ECONNREFUSED, ename(e.errno))
held("the other sandbox's socket file", not os.path.exists("/tmp/adv-" + MARK + ".sock"), "visible")
held("the other sandbox's /dev/shm", not os.path.exists("/dev/shm/adv-" + MARK), "visible")
held("/dev/shm holds nothing of others", os.listdir("/dev/shm") == [], str(os.listdir("/dev/shm")))
for name, fn, args in (("shmget", libc.shmget, (KEY, 4096, 0)), ("msgget", libc.msgget, (KEY, 0)),
                       ("semget", libc.semget, (KEY, 1, 0))):
    r = fn(*args)
    held(f"the other sandbox's SysV {name}", r < 0 and ctypes.get_errno() == errno.ENOENT,
         f"found id {r}")
rt = ctypes.CDLL("librt.so.1", use_errno=True)
r = rt.mq_open(("/adv-" + MARK).encode(), os.O_RDWR, 0, None)
held("the other sandbox's POSIX message queue", r < 0, "opened")
# File locks on the shared image: the other sandbox's locks must not stop
# this one reading or running those files, nor its own locks elsewhere.
for path in %r:
    f = open(path, "rb")
    f.read(64)
    try:
        fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        R[f"shared fcntl lock on {path}"] = "held"
    except OSError as e:
        R[f"shared fcntl lock on {path}"] = "ESCAPED: blocked by the other sandbox " + ename(e.errno)
    # A write lock or a lease needs what a read-only file does not give.
    try:
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        R[f"fcntl write lock on {path}"] = "ESCAPED: a write lock on a read-only file"
    except OSError as e:
        held(f"fcntl write lock on {path}", e.errno == errno.EBADF, ename(e.errno))
    try:
        fcntl.fcntl(f, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        R[f"lease on {path}"] = "ESCAPED: a lease on an image file"
    except OSError as e:
        held(f"lease on {path}", e.errno in (errno.EACCES, errno.EPERM), ename(e.errno))
open("/workspace/mine", "w").close()
fcntl.flock(open("/workspace/mine"), fcntl.LOCK_EX | fcntl.LOCK_NB)
R["flock on the sandbox's own file"] = "held"
held("python still runs", os.system("python3 -c pass") == 0, "it does not")
done()
''' % (MARK, KEY, LOCKED)

FLOCK = r'''
import fcntl
for path in %r:
    try:
        fcntl.flock(open(path, "rb"), fcntl.LOCK_SH | fcntl.LOCK_NB)
        R[f"flock on {path}"] = "held"
    except OSError as e:
        R[f"flock on {path}"] = "ESCAPED: blocked by the other tenant's flock: " + ename(e.errno)
done()
''' % (LOCKED,)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    d = two_tenants(tmp_path_factory, "adv-cross")
    a = d.create("python", token=ALICE)
    b = d.create("python", token=BOB)
    out = {}
    t = threading.Thread(target=lambda: out.update(v=attack(d, a, HOLDER, token=ALICE)))
    t.start()
    for _ in range(600):
        st, r = d.exec(a, token=ALICE, cmd="test", args=["-e", "/workspace/ready"])
        if r.get("exit_code") == 0 or not t.is_alive():
            break
        threading.Event().wait(0.05)
    assert t.is_alive(), f"the holder ended early: {out}"
    st, r = d.exec(a, token=ALICE, cmd="cat", args=["/workspace/ready"])
    setup = json.loads(r["stdout"])
    assert setup and all(v == "held" for v in setup.values()), f"the holder's setup: {setup}"
    yield d, a, b
    d.exec(a, token=ALICE, cmd="touch", args=["/workspace/stop"])
    t.join(120)
    d.close()


def test_ipc_of_another_sandbox_is_out_of_reach(pair):
    d, _, b = pair
    assert_held(attack(d, b, PEEKER, token=BOB), 17)


def image_is_overlaid(d, sid, token):
    """Whether the sandbox's image files are its own inodes (an overlay per
    sandbox, agent/proto.h OPF_OWN_INODES) or, where the kernel gives no
    overlayfs in a user namespace, binds of the shared ones."""
    st, r = d.exec(sid, token=token, cmd="cat", args=["/proc/self/mountinfo"])
    kinds = {l.split()[4]: l.split(" - ")[1].split()[0] for l in r["stdout"].splitlines()}
    return kinds.get("/usr") == "overlay" and kinds.get("/etc/ld.so.cache") == "overlay"


def known_limit_without_overlay(d, b):
    if not image_is_overlaid(d, b, BOB):
        pytest.xfail("this kernel gives no overlayfs in a user namespace: the image is bound, "
                     "and flock() and inotify on its files reach other sandboxes")


def test_flock_on_the_shared_image_does_not_block_another_tenant(pair):
    # flock() works on any descriptor, read-only too, and locks an inode;
    # through a bind every sandbox would open the same inodes of the image.
    # Found by this test; fixed with an overlay of the image per sandbox.
    d, _, b = pair
    known_limit_without_overlay(d, b)
    assert_held(attack(d, b, FLOCK, token=BOB), len(LOCKED))


WATCHED = "/etc/ld.so.cache"
WATCH = r'''
import select, time
WATCHED = %r
fd = libc.inotify_init1(os.O_NONBLOCK)
IN_OPEN, IN_ACCESS = 0x20, 0x1
held("inotify works (tools rely on it)", fd >= 0, ename(ctypes.get_errno()))
libc.inotify_add_watch(fd, WATCHED.encode(), IN_OPEN | IN_ACCESS)
open("/workspace/watching", "w").close()
seen, deadline = 0, time.time() + 20
while time.time() < deadline and not os.path.exists("/workspace/stop-watch"):
    if select.select([fd], [], [], 0.1)[0]:
        seen += len(os.read(fd, 4096)) // 16
R["another tenant's reads are not seen"] = "held" if seen == 0 else \
    f"ESCAPED: {seen} events of another sandbox's reads of {WATCHED}"
done()
''' % (WATCHED,)


def test_inotify_on_the_shared_image_sees_no_other_tenant(pair):
    # Alice's sandbox watches an image file; bob's reads it. A watch is on an
    # inode: through a bind, alice would see bob's every exec (the dynamic
    # linker opens /etc/ld.so.cache). Found by this test; fixed as above.
    d, a, b = pair
    known_limit_without_overlay(d, b)
    out = {}
    t = threading.Thread(target=lambda: out.update(v=attack(d, a, WATCH, token=ALICE)))
    t.start()
    # Nothing in alice's sandbox may exec meanwhile (its own dynamic linker
    # would open the watched file): the file API's operations do not exec.
    for _ in range(600):
        st, r = d.post(f"/v1/sandboxes/{a}/fs/stat", {"path": "/workspace/watching"}, token=ALICE)
        if st == 200 or not t.is_alive():
            break
        threading.Event().wait(0.05)
    d.exec(b, token=BOB, cmd="cat", args=[WATCHED])
    threading.Event().wait(0.5)
    st, _ = d.request("PUT", f"/v1/sandboxes/{a}/files/workspace/stop-watch", raw=b"",
                      token=ALICE)
    assert st in (200, 201, 204), st
    t.join(60)
    assert_held(out["v"], 2)
