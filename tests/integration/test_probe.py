"""Runs tests/probe inside a sandbox, with canaries set up on the host: a
listener on the host's loopback, an abstract socket, marker files (also in
/dev/shm), a secret in the environment, a recognisable host process. Any hole
the probe finds fails the test."""
import os
import shutil
import socket
import subprocess
import uuid

from conftest import box

PROBE = os.environ.get("CELLA_PROBE",
                       os.path.join(os.path.dirname(__file__), "../../build/tests/probe/cella-probe"))


def test_probe_finds_no_hole(state_dir, tmp_path):
    mark = uuid.uuid4().hex[:12]
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    port = tcp.getsockname()[1]
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(f"\0cella-probe-{mark}")
    abstract.listen()
    host_file = tmp_path / f"host-secret-{mark}"
    host_file.write_text("secret")
    shm_file = f"/dev/shm/cella-probe-{mark}"
    open(shm_file, "w").write("secret")
    sleeper = subprocess.Popen(["sleep", f"999.{int(mark[:6], 16)}"])
    ws = tmp_path / "ws"
    ws.mkdir()
    os.chown(ws, 4321, 4321)
    shutil.copy(PROBE, ws / "cella-probe")
    try:
        p = box(state_dir, "--workspace", str(ws), "--", "/workspace/cella-probe",
                "--host-port", str(port), "--abstract", f"cella-probe-{mark}",
                "--absent", str(host_file), "--absent", shm_file, "--absent", str(tmp_path),
                "--absent", state_dir, "--absent", os.path.dirname(os.path.abspath(PROBE)),
                "--secret-env", "CELLA_PROBE_SECRET",
                "--host-proc", f"999.{int(mark[:6], 16)}",
                "--host-hostname", os.uname().nodename,
                env={"CELLA_PROBE_SECRET": "do-not-leak"})
    finally:
        sleeper.kill()
        sleeper.wait()
        os.unlink(shm_file)
        tcp.close()
        abstract.close()
    out = p.stdout.decode()
    holes = [l for l in out.splitlines() if l.startswith("HOLE")]
    assert holes == [], "\n".join(holes) + "\n" + p.stderr.decode()
    assert p.returncode == 0, out + p.stderr.decode()
    assert "PASSED: 0 holes" in out
    # The probe really ran its checks.
    assert out.count("\nok ") > 100
