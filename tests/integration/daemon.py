"""A live `cella serve` for the end-to-end tests: a random loopback port, a
temporary state directory, and a small JSON client over http.client."""
import http.client
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time

from conftest import CELLA, HANG_LIMIT


class Daemon:
    def __init__(self, state_dir=None, config=None, tokens=None, env=None, args=()):
        self._tmp = None
        if state_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="cella-serve-")
            state_dir = self._tmp.name
        self.state_dir = state_dir
        self.config, self.tokens, self.extra_env, self.args = config, tokens, env or {}, args
        self.proc = None
        self.log = []
        self.addr = None

    def start(self, expect_ready=True):
        cmd = [CELLA, "serve", "--listen", "127.0.0.1:0", "--state-dir", self.state_dir,
               *self.args]
        if self.config:
            cmd += ["--config", self.config]
        if self.tokens:
            cmd += ["--tokens", self.tokens]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CELLA_", "SANDBOX_"))}
        env["CELLA_BIN"] = CELLA
        env.update(self.extra_env)
        self.log = []
        self.addr = None
        got = threading.Event()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=env)

        def pump(p=self.proc):
            for raw in p.stderr:
                line = raw.decode(errors="replace").rstrip("\n")
                self.log.append(line)
                m = re.search(r"event=listening addr=(\S+)", line)
                if m:
                    self.addr = m.group(1)
                    got.set()
            got.set()

        threading.Thread(target=pump, daemon=True).start()
        got.wait(HANG_LIMIT)
        if not self.addr:
            self.proc.wait(HANG_LIMIT)
            raise RuntimeError("cella serve did not start:\n" + "\n".join(self.log[-20:]))
        self.host, port = self.addr.rsplit(":", 1)
        self.port = int(port)
        if expect_ready:
            deadline = time.time() + HANG_LIMIT
            while self.get("/readyz")[0] != 200:
                assert time.time() < deadline, "never ready"
                time.sleep(0.05)
        return self

    @property
    def url(self):
        return f"http://{self.addr}"

    def conn(self, timeout=HANG_LIMIT):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method, path, body=None, token=None, headers=None, raw=None):
        """Returns (status, parsed JSON or text)."""
        c = self.conn()
        h = dict(headers or {})
        if token:
            h["Authorization"] = f"Bearer {token}"
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        text = r.read()
        c.close()
        ctype = r.getheader("Content-Type", "")
        if ctype.startswith("application/json"):
            return r.status, json.loads(text)
        return r.status, text.decode(errors="replace")

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body if body is not None else {}, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def create(self, image="shell", token=None, **fields):
        st, b = self.post("/v1/sandboxes", {"image": image, **fields}, token=token)
        assert st == 201, (st, b)
        return b["sandbox_id"]

    def exec(self, sid, token=None, **fields):
        return self.post(f"/v1/sandboxes/{sid}/exec", fields, token=token)

    def stop(self, sig=signal.SIGTERM, timeout=HANG_LIMIT):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout)
        rc = self.proc.returncode if self.proc else None
        self.proc = None
        return rc

    def kill(self):
        return self.stop(signal.SIGKILL)

    def close(self):
        """Stops the daemon with SIGTERM; it must exit 0 with nothing a
        sanitizer complained about (the ASan build runs these tests too)."""
        rc = self.stop()
        if self._tmp:
            self._tmp.cleanup()
        bad = [l for l in self.log if "Sanitizer" in l or "runtime error:" in l]
        if (rc is not None and rc != 0) or bad:
            raise AssertionError(f"cella serve exited {rc}:\n" + "\n".join(self.log[-60:]))


def err_code(body):
    return body["error"]["code"]


def agent_pids():
    """Host pids of every running cella agent (the memfd image)."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{pid}/exe").startswith("/memfd:cella-agent"):
                pids.append(int(pid))
        except OSError:
            pass
    return pids


def wait_until(pred, limit=HANG_LIMIT, step=0.05):
    deadline = time.time() + limit
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    raise AssertionError("condition not met in time")


def tokens_file(directory, tokens):
    """Writes a tokens file ({token: "tenant [admin]"}) in directory, mode
    0600 as the daemon wants it; returns its path."""
    path = os.path.join(str(directory), "tokens")
    with open(path, "w") as f:
        f.write("".join(f"{t} {who}\n" for t, who in tokens.items()))
    os.chmod(path, 0o600)
    return path
