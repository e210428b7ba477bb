"""Clock jumps during timeouts.

No test steps the real clock: the machine (and its other users, CI jobs
included) share it, and a wall clock set back or forward under a running
test suite breaks far more than cella. A jump is harmless to a timeout
measured on CLOCK_MONOTONIC, which no clock setting moves, so what is
checked is that every timeout is measured that way:

- tests/unit/test_clock.c runs the daemon's own code against a wall clock
  read an hour off (an interposed clock_gettime), and asserts that
  clock_now_ns() and the gateway's turn wait (a condition variable, whose
  absolute end the kernel measures on the condition's clock) end on time.
  It found the turn wait on the wall clock: a step back while a call waited
  for its session stretched the wait by the step, past the call's timeout.
- This file reads the sources: every read of the wall clock is listed below
  with what it is for (timestamps shown to people or stored, never an
  interval measured), and every timed wait on a condition variable is on
  one made with CLOCK_MONOTONIC.

Relative timeouts handed to the kernel (poll, SO_SNDTIMEO, nanosleep) and
libmicrohttpd's connection timeout (its own monotonic counter) do not see
the wall clock at all. CLOCK_MONOTONIC stops while the machine is
suspended, so a timeout does not run out during a suspend; that is the
behaviour wanted for a command's time limit.
"""
import os
import re

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")

# file -> why its wall-clock reads are not timeouts.
WALL_CLOCK_USES = {
    "util/log.c": "each log line's ts= timestamp",
    "http/early.c": "the Date header of an early reply",
    "api/flujo.c": "the mtime of files in an upload archive",
    "api/gateway_sessions.c": "a session's created_at, and the mtime of written files",
    "core/registry.c": "core_wall_ms: created_at and last_used_at shown and stored, "
                       "and the result cache's eviction order",
    "box/workspace.c": "the age of a half-made workspace, against its directory's mtime "
                       "(a wall-clock time); see the note in test_wall_clock_reads_are_known",
}

WALL_CLOCK = re.compile(r"CLOCK_REALTIME|gettimeofday\s*\(|\btime\s*\(\s*(NULL|0)\s*\)|"
                        r"timespec_get\s*\(|\bftime\s*\(")


def sources():
    for root, _, files in os.walk(SRC):
        for f in files:
            if f.endswith((".c", ".h")):
                path = os.path.join(root, f)
                with open(path, errors="replace") as fh:
                    yield os.path.relpath(path, SRC), fh.read()


def code_lines(text):
    """(line number, line) outside comments, roughly: enough for a lint."""
    in_comment = False
    for n, line in enumerate(text.splitlines(), 1):
        out = ""
        i = 0
        while i < len(line):
            if in_comment:
                j = line.find("*/", i)
                if j < 0:
                    i = len(line)
                else:
                    in_comment, i = False, j + 2
            elif line.startswith("/*", i):
                in_comment, i = True, i + 2
            elif line.startswith("//", i):
                break
            else:
                out += line[i]
                i += 1
        yield n, out


def test_the_timeout_clock_is_monotonic():
    with open(os.path.join(SRC, "util", "fdio.c")) as f:
        text = f.read()
    body = text[text.index("int64_t clock_now_ns(void)"):]
    body = body[:body.index("\n}\n")]
    assert "clock_gettime(CLOCK_MONOTONIC," in body, body


def test_wall_clock_reads_are_known():
    """A new wall-clock read fails here until it is listed with its reason.
    (workspace.c's sweep of half-made workspaces compares a directory's
    mtime with the wall clock, as it must; a jump forward of a minute
    could only make it remove one another `cella box` is making in that
    same microsecond, which then fails cleanly.)"""
    found = {}
    for rel, text in sources():
        for n, line in code_lines(text):
            if WALL_CLOCK.search(line):
                found.setdefault(rel, []).append(f"{rel}:{n}: {line.strip()}")
    unknown = [hit for rel, hits in found.items() if rel not in WALL_CLOCK_USES for hit in hits]
    assert not unknown, "wall-clock reads in files not known to use them for timestamps " \
                        "(a timeout must use clock_now_ns()):\n" + "\n".join(unknown)


def test_timed_waits_are_on_monotonic_conditions():
    """pthread_cond_timedwait takes an absolute end on the condition's
    clock, which is the wall clock unless the condition was made with
    another: each condition waited on with a time limit is made with a
    CLOCK_MONOTONIC attribute, and the end handed to it is read from
    CLOCK_MONOTONIC."""
    monotonic_conds, static_conds, waits, bad = set(), set(), [], []
    for rel, text in sources():
        lines = [line for _, line in code_lines(text)]
        code = "\n".join(lines)
        mono_file = re.search(r"pthread_condattr_setclock\(\s*&\w+\s*,\s*CLOCK_MONOTONIC\s*\)", code)
        for m in re.finditer(r"pthread_cond_init\(\s*&([\w.>-]+)\s*,\s*([^)]*)\)", code):
            name = re.split(r"->|\.", m.group(1))[-1]
            if mono_file and m.group(2).strip() not in ("NULL", "0"):
                monotonic_conds.add(name)
        for m in re.finditer(r"pthread_cond_t\s+(\w+)\s*=\s*PTHREAD_COND_INITIALIZER", code):
            static_conds.add(m.group(1))
        for i, line in enumerate(lines):
            m = re.search(r"pthread_cond_timedwait\(\s*&([\w.>-]+)", line)
            if not m:
                continue
            waits.append((rel, i + 1, re.split(r"->|\.", m.group(1))[-1]))
            before = [re.search(r"clock_gettime\((\w+)", l) for l in lines[max(0, i - 15):i]]
            clocks = [c.group(1) for c in before if c]
            # Or the end comes from a helper of this file that reads only
            # CLOCK_MONOTONIC (a deadline computed once, before a loop).
            end = re.search(r"pthread_cond_timedwait\([^,]+,[^,]+,\s*&(\w+)", line)
            if end and (not clocks or clocks[-1] != "CLOCK_MONOTONIC"):
                for l in reversed(lines[max(0, i - 80):i]):
                    a = re.search(r"\b" + end.group(1) + r"\s*=\s*(\w+)\(", l)
                    if a:
                        body = re.search(r"\n[^\n]*\b" + a.group(1) + r"\([^)]*\)\s*\n\{(.*?)\n\}",
                                         code, re.S)
                        used = re.findall(r"clock_gettime\((\w+)", body.group(1)) if body else []
                        if used and set(used) == {"CLOCK_MONOTONIC"}:
                            clocks = ["CLOCK_MONOTONIC"]
                        break
            if not clocks or clocks[-1] != "CLOCK_MONOTONIC":
                bad.append(f"{rel}:{i + 1}: the end is not read from CLOCK_MONOTONIC ({clocks})")
        for other in ("sem_timedwait", "pthread_mutex_timedlock", "pthread_timedjoin_np"):
            if other in code:
                bad.append(f"{rel}: {other} (measured on the wall clock)")
    assert waits
    for rel, line, cond in waits:
        if cond in static_conds or cond not in monotonic_conds:
            bad.append(f"{rel}:{line}: {cond} is not made with CLOCK_MONOTONIC")
    assert not bad, "\n".join(bad)
