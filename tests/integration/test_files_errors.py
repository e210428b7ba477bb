"""The file API's refusals, limits and races, each asserted by its exact
S-code and HTTP status: bad requests, unreadable paths, the file-call cap,
stopped and dead sandboxes, costly patterns, archives refused, sed's
replacement syntax, the idle clock, symlinks swapped mid-call and links to
the daemon's own state. (test_files.py has the operations' normal use.)"""
import gzip
import io
import json
import os
import signal
import socket
import tarfile
import threading
import time

import pytest

from conftest import HANG_LIMIT
from daemon import err_code, wait_until
# The same daemon setup as test_files (a 64 MiB quota); fixtures imported
# into a module run once per module.
from test_files import d, fs, ok, raw, sh, sid, tar  # noqa: F401


def code(st, b):
    """(status, S-code) of a JSON answer, or of raw() bytes."""
    if isinstance(b, (bytes, str)):
        b = json.loads(b)
    return st, err_code(b)


# ---- bad requests -------------------------------------------------------------------


def test_bad_requests(d, sid):
    ok(d, sid, "write", path="/workspace/a", content="A")
    # mv to a missing parent, on one filesystem and across two.
    st, b = fs(d, sid, "mv", src="/workspace/a", dst="/workspace/no/such/b")
    assert code(st, b) == (404, "S211") and "parent not found: /workspace/no/such" in \
        b["error"]["message"]
    ok(d, sid, "write", path="/tmp/t", content="T")
    st, b = fs(d, sid, "mv", src="/tmp/t", dst="/workspace/no/such/t")
    assert code(st, b) == (404, "S211"), b
    # write with a bad mode.
    for mode in ("0999", "rwx", "-1", "017777", ""):
        st, b = fs(d, sid, "write", path="/workspace/m", content="x", mode=mode)
        assert code(st, b) == (400, "S210") and "mode" in b["error"]["message"], (mode, b)
    assert ok(d, sid, "ls", path="/workspace")["entries"][0]["name"] == "a"
    # sed: a missing path, recursive false on a directory, bad filters.
    st, b = fs(d, sid, "sed", path="/workspace/nope", pattern="a", replacement="b")
    assert code(st, b) == (404, "S211"), b
    st, b = fs(d, sid, "sed", path="/workspace", pattern="a", replacement="b", recursive=False)
    assert code(st, b) == (400, "S210") and "recursive" in b["error"]["message"], b
    # glob with an invalid pattern.
    for pat in ("", "///", "x" * 5000):
        st, b = fs(d, sid, "glob", path="/workspace", pattern=pat)
        assert code(st, b) == (400, "S210"), (pat[:10], b)
    st, b = fs(d, sid, "grep", path="/workspace", pattern="A", include_glob=["/"])
    assert code(st, b) == (400, "S210"), b


# ---- permissions ----------------------------------------------------------------------


def test_unreadable_paths_are_s215(d, sid):
    """chmod 000 on what the sandbox user owns: every reader gets S215
    (403), never a partial answer. (A root-owned file cannot be made by the
    sandbox user; its own file with no permissions is refused the same.)"""
    sh(d, sid, "mkdir -p /workspace/locked/in && echo secret > /workspace/locked/in/f && "
               "echo secret > /workspace/secret && chmod 000 /workspace/secret /workspace/locked")
    for op, body in (("ls", {"path": "/workspace/locked"}),
                     ("grep", {"path": "/workspace/locked", "pattern": "secret"}),
                     ("glob", {"path": "/workspace/locked", "pattern": "*"}),
                     ("read", {"path": "/workspace/secret"}),
                     ("grep", {"path": "/workspace/secret", "pattern": "s", "recursive": False})):
        st, b = fs(d, sid, op, **body)
        assert code(st, b) == (403, "S215"), (op, body, b)
    st, _, body = raw(d, "GET", f"/v1/sandboxes/{sid}/files/workspace/secret")
    assert code(st, body) == (403, "S215")
    st, _, body = raw(d, "GET", f"/v1/sandboxes/{sid}/archive/workspace/locked")
    assert code(st, body) == (403, "S215")
    # Inside a tree walked from a readable root, the unreadable is skipped.
    b = ok(d, sid, "grep", path="/workspace", pattern="secret")
    assert b["matches"] == []
    # The owner may open it up again.
    ok(d, sid, "chmod", path="/workspace/secret", mode="0600")
    assert ok(d, sid, "read", path="/workspace/secret")["body"] == "secret\n"


# ---- the file-call cap ------------------------------------------------------------------


def test_the_sixteen_file_call_cap(d, sid):
    """16 uploads held open (their bodies never finish) fill the sandbox's
    file-call slots: the 17th call is S003 (429). Deterministic: a transfer
    has no time limit, so each holds its slot until its client lets go, and
    each upload's "100 Continue" comes only once its slot is taken."""
    socks = []
    try:
        for i in range(16):
            s = socket.create_connection((d.host, d.port))
            s.settimeout(HANG_LIMIT)
            s.sendall((f"PUT /v1/sandboxes/{sid}/files/workspace/held{i} HTTP/1.1\r\nHost: localhost\r\n"
                       f"Content-Length: 1000000\r\nExpect: 100-continue\r\n\r\n").encode())
            socks.append(s)
            got = b""
            while b"\r\n\r\n" not in got:
                got += s.recv(1000)
            assert got.startswith(b"HTTP/1.1 100"), (i, got)
            s.sendall(b"h" * 1000)
        st, b = fs(d, sid, "stat", path="/workspace")
        assert code(st, b) == (429, "S003") and "file operations" in b["error"]["message"]
        st, _, body = raw(d, "GET", f"/v1/sandboxes/{sid}/files/etc/hostname")
        assert code(st, body) == (429, "S003")
        # Execs have their own slots.
        assert sh(d, sid, "echo still")["stdout"] == "still\n"
    finally:
        for s in socks:
            s.close()
    # Let go: the slots come back, nothing was written, nothing stays reserved.
    wait_until(lambda: fs(d, sid, "ls", path="/workspace")[0] == 200)
    assert ok(d, sid, "ls", path="/workspace")["entries"] == []
    wait_until(lambda: raw(d, "PUT", f"/v1/sandboxes/{sid}/files/workspace/big",
                           b"b" * (60 << 20))[0] == 200)


# ---- stopped and dead sandboxes -----------------------------------------------------------


def every_call_answers(d, s, want):
    calls = [
        lambda: fs(d, s, "ls", path="/workspace"),
        lambda: fs(d, s, "write", path="/workspace/x", content="x"),
        lambda: raw(d, "GET", f"/v1/sandboxes/{s}/files/etc/hostname")[::2],
        lambda: raw(d, "PUT", f"/v1/sandboxes/{s}/files/workspace/x", b"x" * 100)[::2],
        lambda: raw(d, "PUT", f"/v1/sandboxes/{s}/files/workspace/x", b"x" * (4 << 20))[::2],
        lambda: raw(d, "GET", f"/v1/sandboxes/{s}/archive/workspace")[::2],
        lambda: raw(d, "PUT", f"/v1/sandboxes/{s}/archive/workspace", b"\0" * 1024)[::2],
    ]
    for i, call in enumerate(calls):
        assert code(*call()) == want, i


def test_calls_on_a_stopped_or_dead_sandbox(d):
    # Stopped: a stop removes the sandbox from the registry (BEHAVIOUR-NOTES
    # §2: "a second stop is S002"), so file calls find no sandbox.
    s = d.create("shell")
    assert d.delete(f"/v1/sandboxes/{s}?wait=true")[0] == 200
    every_call_answers(d, s, (404, "S002"))
    # Dead: its agent was killed; it is still listed (state "dead") until
    # stopped, and every call is S004.
    s = d.create("shell")
    sh(d, s, "sleep 4343 >/dev/null 2>&1 &")

    def agent_of_sleep():
        for pid in os.listdir("/proc"):
            try:
                if pid.isdigit() and open(f"/proc/{pid}/cmdline", "rb").read() == b"sleep\x004343\x00":
                    for line in open(f"/proc/{pid}/status"):
                        if line.startswith("PPid:"):
                            return int(line.split()[1])
            except OSError:
                pass
    os.kill(wait_until(agent_of_sleep), signal.SIGKILL)
    wait_until(lambda: d.get(f"/v1/sandboxes/{s}")[1]["state"] == "dead")
    every_call_answers(d, s, (410, "S004"))
    assert d.delete(f"/v1/sandboxes/{s}?wait=true")[0] == 200
    every_call_answers(d, s, (404, "S002"))


# ---- grep's limits ----------------------------------------------------------------------------


def test_grep_pattern_past_the_match_limit(d, sid):
    # Nested quantifiers on 50,000 a's with no match: exponential
    # backtracking, stopped at the match limit, every time.
    sh(d, sid, "python3 -c \"print('a' * 50000 + 'b')\" > /workspace/a.txt")
    for path, rec in (("/workspace/a.txt", False), ("/workspace", True)):
        st, b = fs(d, sid, "grep", path=path, pattern=r"(a+)+$", recursive=rec)
        assert code(st, b) == (400, "S217"), b
        assert "too costly" in b["error"]["message"] and "limit reached" in b["error"]["message"]
        assert "/workspace/a.txt:1" in b["error"]["message"]


# ---- archives -------------------------------------------------------------------------------------


def test_archive_refusals_and_their_codes(d, sid):
    ok(d, sid, "mkdir", path="/workspace/x")
    good = tar(("f", "file", b"x" * 5000))
    cases = [
        (tar(("../evil", "file", b"e")), 400, "S210"),
        (tar(("/abs", "file", b"e")), 400, "S210"),
        (tar(("a/../../evil", "file", b"e")), 400, "S210"),
        (tar(("link", tarfile.SYMTYPE, "/tmp"), ("link/evil", "file", b"e")), 400, "S210"),
        (tar(("l2", tarfile.SYMTYPE, ".."), ("l2/evil", "file", b"e")), 400, "S210"),
        (tar(("hard", tarfile.LNKTYPE, "/etc/passwd")), 400, "S210"),
        (tar(("dev", tarfile.CHRTYPE, "")), 501, "S219"),
        (tar(("fifo", tarfile.FIFOTYPE, "")), 501, "S219"),
        (gzip.compress(good), 501, "S219"),                       # compressed: send a plain tar
        (good[:512 + 2048], 500, "S216"),                         # cut in the middle of f
        (good[:300], 500, "S216"),                                # cut in its header
        (b"\x01" * 512 + good[512:], 400, "S210"),                # a bad header checksum
    ]
    for i, (data, status, want) in enumerate(cases):
        st, _, body = raw(d, "PUT", f"/v1/sandboxes/{sid}/archive/workspace/x", data)
        assert code(st, body) == (status, want), (i, body)
    assert json.loads(raw(d, "PUT", f"/v1/sandboxes/{sid}/archive/workspace/x", good)[2]) == \
        {"path": "/workspace/x", "entries": 1, "bytes": 5000}
    # Nothing escaped; the links that came before a refused entry stay (an
    # archive is extracted as it arrives), pointing where they point.
    out = sh(d, sid, "find / -xdev -name evil 2>/dev/null; find /workspace /tmp -name evil; "
                     "ls -A /workspace/x")["stdout"]
    assert out == "f\nl2\nlink\n"


# ---- sed's replacement syntax ---------------------------------------------------------------------


def test_sed_replacement_syntax(d, sid):
    ok(d, sid, "write", path="/workspace/r.txt", content="Hello World\nhello there\nHELLO\n")
    # $name and ${name}; ${1}a is group 1 then "a", while $1a names a group
    # "1a" (none: nothing inserted), as in Rust; $$ is a dollar; ignore_case
    # makes "hello" match every case.
    b = ok(d, sid, "sed", files=["/workspace/r.txt"], pattern=r"(?<greet>hello) (\w+)",
           replacement="${2}a|$greet|${greet}|$$|$1a.", ignore_case=True)
    assert b["total_replacements"] == 2
    assert ok(d, sid, "read", path="/workspace/r.txt")["body"] == \
        "Worlda|Hello|Hello|$|.\ntherea|hello|hello|$|.\nHELLO\n"
    b = ok(d, sid, "sed", path="/workspace", pattern="HELLO", replacement="bye")
    assert b["total_replacements"] == 1                        # case matters by default
    b = ok(d, sid, "sed", path="/workspace", pattern="hello", replacement="$$x", ignore_case=True)
    assert b["total_replacements"] == 4
    assert ok(d, sid, "read", path="/workspace/r.txt")["body"] == \
        "Worlda|$x|$x|$|.\ntherea|$x|$x|$|.\nbye\n"


# ---- the idle clock -----------------------------------------------------------------------------------


def test_file_calls_bump_the_idle_clock(d, sid):
    from datetime import datetime

    def last_used():
        t = d.get(f"/v1/sandboxes/{sid}")[1]["last_used_at"]
        return datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
    first = last_used()
    time.sleep(1.2)
    assert abs(last_used() - first) < 0.5                      # looking does not touch it
    calls = [lambda: ok(d, sid, "ls", path="/workspace"),
             lambda: fs(d, sid, "read", path="/workspace/none"),   # a failed call counts too
             lambda: raw(d, "PUT", f"/v1/sandboxes/{sid}/files/workspace/t", b"t"),
             lambda: raw(d, "GET", f"/v1/sandboxes/{sid}/files/workspace/t"),
             lambda: raw(d, "GET", f"/v1/sandboxes/{sid}/archive/workspace")]
    for i, call in enumerate(calls):
        before = last_used()
        time.sleep(1.2)
        call()
        assert last_used() - before > 1.0, i


# ---- symlinks swapped mid-call --------------------------------------------------------------------


def flipping(d, sid, script):
    """Runs script (a loop in the sandbox) in the background; returns the
    Event set when it ends."""
    done = threading.Event()

    def run():
        d.exec(sid, argv=["/bin/sh", "-c", script])
        done.set()
    threading.Thread(target=run, daemon=True).start()
    return done


def test_swapped_symlink_races_against_get_ls_and_write(d, sid):
    """A process in the sandbox flips names between real entries and links
    out of the workspace while downloads, listings and writes run: every
    answer is the real entry's or a clean error, and nothing outside the
    workspace is read from or written to."""
    passwd = sh(d, sid, "cat /etc/passwd")["stdout"]
    host_passwd = open("/etc/passwd").read()
    sh(d, sid, "echo safe > /workspace/real && mkdir -p /workspace/rdir /workspace/pd && "
               "touch /workspace/rdir/inside")
    etc = sorted(e["name"] for e in ok(d, sid, "ls", path="/etc")["entries"])
    done = flipping(d, sid, "i=0; while [ $i -lt 2000 ]; do "
                            "ln -sfn /etc/shadow /workspace/flip; ln -sfn real /workspace/flip; "
                            "ln -sfn /etc /workspace/fdir; ln -sfn rdir /workspace/fdir; "
                            "ln -sfn /etc/passwd /workspace/wflip; rm -f /workspace/wflip; "
                            "ln -sfn /etc /workspace/pdir; ln -sfn pd /workspace/pdir; "
                            "i=$((i+1)); done")
    seen = {"get": set(), "ls": set(), "write": set()}
    while not done.is_set():
        st, _, data = raw(d, "GET", f"/v1/sandboxes/{sid}/files/workspace/flip")
        if st == 200:
            assert data == b"safe\n"
        else:
            assert code(st, data) in ((404, "S211"), (403, "S215")), data
        seen["get"].add(st)
        st, b = fs(d, sid, "ls", path="/workspace/fdir")
        if st == 200:
            names = sorted(e["name"] for e in b["entries"])
            assert names in (["inside"], etc), names
        else:
            assert code(st, b) in ((404, "S211"), (400, "S212")), b
        seen["ls"].add(st)
        for path in ("/workspace/wflip", "/workspace/pdir/x"):
            st, b = fs(d, sid, "write", path=path, content="w")
            if st != 200:
                assert code(st, b) in ((404, "S211"), (403, "S215")), (path, b)
            seen["write"].add(st)
    assert all(seen.values())
    # The link's target was replaced, never written through; no write
    # landed in /etc through the swapped parent.
    assert sh(d, sid, "cat /etc/passwd")["stdout"] == passwd
    assert sh(d, sid, "ls /etc/x 2>&1 || true")["stdout"].strip().endswith("No such file or directory")
    assert open("/etc/passwd").read() == host_passwd and not os.path.exists("/etc/x")


# ---- links to the daemon's state ------------------------------------------------------------------


def test_links_to_the_daemons_state_lead_nowhere(d, sid):
    """The daemon's state directory is not in the sandbox: a link to it, or
    to a file in it, is a dangling link there. Read, downloaded or archived,
    it is S211, and no byte of the host's state comes back."""
    state = d.state_dir
    files = sorted(os.listdir(state))
    assert files, "the daemon keeps its state here"
    sh(d, sid, f"ln -s {state} /workspace/state && ln -s {state}/{files[0]} /workspace/statef")
    for p in ("/workspace/statef", f"/workspace/state/{files[0]}"):
        st, b = fs(d, sid, "read", path=p)
        assert code(st, b) == (404, "S211"), (p, b)
        st, _, body = raw(d, "GET", f"/v1/sandboxes/{sid}/files{p}")
        assert code(st, body) == (404, "S211"), (p, body)
    st, _, body = raw(d, "GET", f"/v1/sandboxes/{sid}/archive/workspace/state")
    assert code(st, body) == (404, "S211"), body
    # The workspace's own archive carries the links as links, not what they name.
    st, _, data = raw(d, "GET", f"/v1/sandboxes/{sid}/archive/workspace")
    assert st == 200
    members = {m.name: m for m in tarfile.open(fileobj=io.BytesIO(data)).getmembers()}
    assert members["state"].issym() and members["state"].linkname == state
    assert members["statef"].issym() and len(members) == 2


# ---- text with NUL, answers past the result cap, moves that cannot remove ------------


def test_nul_bytes_in_file_text_are_carried(d, sid):
    """NUL is valid UTF-8: read's body and a grep line past the first 8 KiB
    carry it as \\u0000 (the agent's answer once failed to parse: 500)."""
    st, _, b = raw(d, "PUT", f"/v1/sandboxes/{sid}/files/workspace/nul.txt",
                   body=b"hello\0world\n")
    assert st == 200, b
    assert ok(d, sid, "read", path="/workspace/nul.txt")["body"] == "hello\0world\n"
    sh(d, sid, "head -c 9000 /dev/zero | tr '\\0' x > /workspace/late.txt && "
               "printf '\\nneedle\\0here\\n' >> /workspace/late.txt")
    m = ok(d, sid, "grep", path="/workspace/late.txt", pattern="needle",
           recursive=False)["matches"]
    assert [x["content"] for x in m] == ["needle\0here"], m


def test_sed_and_ls_past_the_result_cap_say_truncated(d, sid):
    """A listing too large for an answer is cut at 8 MiB and says so; sed
    still edits every file and counts every replacement (it once edited
    them all and then answered 500)."""
    deep = "/workspace/" + "/".join(["d" * 200] * 19)      # ~3.8 KiB of path
    sh(d, sid, f"mkdir -p {deep} && cd {deep} && i=0; "
               "while [ $i -lt 2600 ]; do echo foo > f$i; i=$((i+1)); done")
    b = ok(d, sid, "sed", path="/workspace", pattern="foo", replacement="bar")
    assert b["truncated"] is True and b["total_replacements"] == 2600, \
        {k: v for k, v in b.items() if k != "results"}
    assert 0 < len(b["results"]) < 2600 and all(r["success"] for r in b["results"])
    left = sh(d, sid, "grep -rl foo /workspace | wc -l")["stdout"]
    assert left.strip() == "0", left
    # Untruncated answers keep iii's shape: no truncated key.
    b = ok(d, sid, "sed", path=f"{deep}/f1", pattern="bar", replacement="baz")
    assert "truncated" not in b and b["total_replacements"] == 1, b
    sh(d, sid, "rm -rf /workspace/dddd* /workspace/d*")
    # ls of ~25,000 entries with 250-byte names: more than 8 MiB of JSON.
    assert sh(d, sid, "mkdir /workspace/big && cd /workspace/big && "
               "/usr/bin/python3 -c \"[open('%05d' % i + 'n' * 245, 'w').close() "
               "for i in range(25000)]\" && ls | wc -l")["stdout"].strip() == "25000"
    b = ok(d, sid, "ls", path="/workspace/big")
    names = [e["name"] for e in b["entries"]]
    assert b["truncated"] is True and 0 < len(names) < 25000, len(names)
    assert names == sorted(names) and names[0].startswith("00000"), names[:2]
    assert "truncated" not in ok(d, sid, "ls", path="/workspace")
    sh(d, sid, "rm -rf /workspace/big")


def test_mv_across_filesystems_that_cannot_remove_its_source(d, sid):
    """/tmp to /workspace is a copy then a removal: a source the sandbox
    user may not remove (read-only /etc) is refused before anything is
    copied, rather than answered moved: true with the source still there."""
    st, b = fs(d, sid, "mv", src="/etc/passwd", dst="/workspace/p")
    assert st >= 400 and "/etc" in b["error"]["message"], (st, b)
    assert sh(d, sid, "ls /workspace/p /etc/passwd 2>&1; true")["stdout"].count("No such") == 1
    # overwrite onto a directory with entries names the destination.
    ok(d, sid, "mkdir", path="/workspace/full/x", parents=True)
    ok(d, sid, "mkdir", path="/workspace/src")
    st, b = fs(d, sid, "mv", src="/workspace/src", dst="/workspace/full", overwrite=True)
    assert code(st, b) == (409, "S214") and "/workspace/full" in b["error"]["message"], b
    # A move across filesystems still works when it can.
    ok(d, sid, "write", path="/tmp/t2", content="T")
    assert ok(d, sid, "mv", src="/tmp/t2", dst="/workspace/t2") == {"moved": True}
    assert ok(d, sid, "read", path="/workspace/t2")["body"] == "T"
