"""Shared pieces of the escape suite: a daemon with two tenants, and a way to
run an attack written in Python inside a sandbox and read its verdicts.

An attack prints one JSON object {check: verdict}; a verdict is "held" or
starts with "ESCAPED", followed by what got out. `assert_held` fails with
every escaped check named, so a failure says what escaped."""
import json
import os

from daemon import Daemon, tokens_file

ALICE = "tok-alice-adversarial-0123456789"
BOB = "tok-bob-adversarial-abcdefghijkl"
ADMIN = "tok-admin-adversarial-ZYXWVUTSRQ"
TOKENS = {ALICE: "alice", BOB: "bob", ADMIN: "ops admin"}

# Helpers every attack starts with: raw syscalls through libc, and verdicts.
PRELUDE = r'''
import ctypes, errno, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
R = {}
def sc(nr, *args):
    ctypes.set_errno(0)
    conv = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    r = libc.syscall(ctypes.c_long(nr), *conv)
    return r, ctypes.get_errno()
def ename(e):
    return errno.errorcode.get(e, str(e))
def held(name, ok, detail=""):
    R[name] = "held" if ok else "ESCAPED: " + detail
def refused(name, res, want=(errno.EPERM,)):
    r, e = res
    held(name, r < 0 and e in want, f"returned {r}, errno {ename(e)}")
def done():
    print(json.dumps(R), flush=True)
'''


def two_tenants(tmp_path_factory, name, **kw):
    tmp = tmp_path_factory.mktemp(name)
    return Daemon(tokens=tokens_file(tmp, TOKENS), **kw).start()


def attack(d, sid, code, token=ALICE, timeout_ms=60000, **fields):
    """Runs PRELUDE + code with python3 in sandbox sid; returns its verdicts."""
    st, b = d.exec(sid, token=token, cmd="python3", args=["-c", PRELUDE + code],
                   timeout_ms=timeout_ms, **fields)
    assert st == 200, (st, b)
    lines = [l for l in b["stdout"].splitlines() if l.startswith("{")]
    assert b["exit_code"] == 0 and lines, f"the attack itself failed: {b}"
    return json.loads(lines[-1])


def assert_held(verdicts, min_checks=1):
    escaped = {k: v for k, v in verdicts.items() if v != "held"}
    assert not escaped, "escaped:\n" + "\n".join(f"  {k}: {v}" for k, v in escaped.items())
    assert len(verdicts) >= min_checks, f"only {len(verdicts)} checks ran: {verdicts}"


def children_of(pid):
    """Host pids whose parent is pid."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("PPid:") and int(line.split()[1]) == pid:
                        out.append(int(p))
                        break
        except OSError:
            pass
    return out


def agents_of(d):
    """Host pids of the agents (PID 1 of each sandbox) of daemon d. One may
    end while a test looks at it (a sandbox stopped): see gone()."""
    agents = []
    for p in children_of(d.proc.pid):
        try:
            if os.readlink(f"/proc/{p}/exe").startswith("/memfd:cella-agent"):
                agents.append(p)
        except OSError:
            pass
    return agents


def gone(e):
    """An OSError that means the process ended while we looked."""
    return isinstance(e, (FileNotFoundError, ProcessLookupError))


def agent_of(d, sid):
    """The host pid of sandbox sid's agent: the one with sid's workspace
    mounted."""
    for pid in agents_of(d):
        try:
            with open(f"/proc/{pid}/mountinfo") as f:
                if f"/workspaces/{sid} " in f.read():
                    return pid
        except OSError as e:
            if not gone(e):
                raise
    return None
