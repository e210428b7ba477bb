"""The agent when the daemon is not root: it then shares the sandbox user's
uid (a single mapping), so only being non-dumpable and PID 1 of its
namespace shield it. The attacks of test_escape_kernel on the agent, again
in that mode, through `cella box` run as nobody."""
import json
import shutil

from adv import PRELUDE, assert_held
from test_unprivileged import V1, as_nobody, nobody_env  # noqa: F401 (a fixture)

import pytest

ATTACK = PRELUDE + r'''
PTRACE_ATTACH, PTRACE_SEIZE = 16, 0x4206
refused("ptrace(ATTACH, agent)", sc(101, PTRACE_ATTACH, 1, 0, 0))
refused("ptrace(SEIZE, agent)", sc(101, PTRACE_SEIZE, 1, 0, 0))
buf = ctypes.create_string_buffer(64)
iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)
refused("process_vm_readv(agent)", sc(310, 1, iov, 1, iov, 1, 0))
for f in ("mem", "environ", "exe", "root", "cwd", "fd", "maps", "auxv"):
    try:
        os.open(f"/proc/1/{f}", os.O_RDONLY)
        R[f"/proc/1/{f}"] = "ESCAPED: opened"
    except OSError:
        R[f"/proc/1/{f}"] = "held"
pfd, e = sc(434, 1, 0)
held("pidfd_getfd of the agent's socket", pfd < 0 or sc(438, pfd, 3, 0)[0] < 0, "took it")
# The same uid may send signals, but PID 1 of a namespace gets only those it
# handles, and the agent handles none (SIGCHLD comes through a signalfd).
for s in list(range(1, 32)) + list(range(34, 65)):
    libc.kill(1, s)
import time
time.sleep(0.2)   # a signal that killed the agent would have ended us by now
done()
'''


@pytest.mark.skipif(not V1, reason="needs cgroup v1 controllers to delegate by chown")
def test_agent_of_an_unprivileged_daemon_holds(nobody_env):  # noqa: F811
    _, base, env = nobody_env
    with open(f"{base}/ws/attack.py", "w") as f:
        f.write(ATTACK)
    shutil.chown(f"{base}/ws/attack.py", "nobody")
    # Two commands in one sandbox: the attack, then proof the agent still
    # runs commands (a dead agent fails the whole `cella box`).
    p = as_nobody(env, "--workspace", f"{base}/ws", "--", "sh", "-c",
                  "python3 /workspace/attack.py && echo agent-alive")
    out = p.stdout.decode()
    assert p.returncode == 0 and out.endswith("agent-alive\n"), (p.returncode, out, p.stderr)
    assert_held(json.loads(out.splitlines()[0]), 12)
