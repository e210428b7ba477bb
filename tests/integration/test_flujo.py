"""The Flujo dialect end to end: POST /execute as Flujo's RemoteSandbox sends
it, and every answer read back the way that client reads it (exit_code with
int(), error as a string or None, artifacts as {"base64": ...}). Files and
their traversal refusals, arguments, environment, timeouts, artifacts,
languages, malformed bodies, auth, limits and the network. A real daemon,
real sandboxes."""
import base64
import http.client
import json
import os
import threading
import time

import pytest

from conftest import HANG_LIMIT
from daemon import Daemon, wait_until

# Host variables a sandbox must never see (the daemon has them).
SECRET = "FLUJO_HOST_SECRET"


@pytest.fixture(scope="module")
def d():
    daemon = Daemon(env={SECRET: "do-not-leak"}).start()
    yield daemon
    daemon.close()


def payload(code, language="python", files=None, environment=None, arguments=None,
            timeout_s=60):
    """Exactly what RemoteSandbox.exec_code builds: every field, always."""
    return {"code": code, "language": language, "files": files or {},
            "environment": environment or {}, "arguments": list(arguments or ()),
            "timeout_s": timeout_s}


def send(d, body=None, raw=None, token=None, timeout=HANG_LIMIT):
    """POST /execute as the client does; returns (status, parsed JSON)."""
    c = http.client.HTTPConnection(d.host, d.port, timeout=timeout)
    h = {"Content-Type": "application/json"}
    if token:
        h["Authorization"] = f"Bearer {token}"
    c.request("POST", "/execute", body=raw if raw is not None else json.dumps(body), headers=h)
    r = c.getresponse()
    text = r.read()
    c.close()
    assert r.getheader("Content-Type", "").startswith("application/json"), text[:200]
    return r.status, json.loads(text)


def client_view(status, data):
    """What flujo's RemoteSandbox makes of an answer (its reading, restated):
    any shape it could not read fails here."""
    exit_code = int(data.get("exit_code", status))      # null would raise
    assert isinstance(data["exit_code"], int) and not isinstance(data["exit_code"], bool)
    error = data.get("error")
    assert error is None or isinstance(error, str), error
    if status >= 400 and error is None:
        error = f"Remote sandbox HTTP {status}"
    arts = {}
    for k, v in (data.get("artifacts") or {}).items():
        assert isinstance(v, dict) and set(v) == {"base64"}, v
        arts[k] = base64.b64decode(v["base64"], validate=True)
    for f in ("stdout", "stderr"):
        assert isinstance(data[f], str)
    assert isinstance(data["timed_out"], bool)
    return {"stdout": data["stdout"], "stderr": data["stderr"], "exit_code": exit_code,
            "timed_out": data["timed_out"], "error": error, "artifacts": arts,
            "sandbox_id": data.get("sandbox_id")}


def execute(d, code, want_status=200, **kw):
    st, data = send(d, payload(code, **kw))
    assert st == want_status, (st, data)
    return client_view(st, data)


def refused(d, body=None, raw=None, want=400, token=None):
    st, data = send(d, body, raw=raw, token=token)
    assert st == want, (st, data)
    v = client_view(st, data)
    assert v["exit_code"] == 1 and v["error"] and not v["timed_out"], data
    assert data["artifacts"] is None and data["stdout"] == "" and data["stderr"] == ""
    return v["error"]


def no_sandboxes_left(d, token=None):
    wait_until(lambda: d.get("/v1/sandboxes", token=token)[1]["sandboxes"] == [])


# ---- the client's request -------------------------------------------------------


def test_the_clients_exact_request(d):
    code = ("import os, sys, json\n"
            "print(json.dumps({'argv': sys.argv, 'cwd': os.getcwd(), 'foo': os.environ.get('FOO'),\n"
            "                  'cfg': open('conf/settings.toml').read()}))\n"
            "print('to stderr', file=sys.stderr)\n"
            "os.makedirs('artifacts', exist_ok=True)\n"
            "open('artifacts/report.json', 'w').write('{\"ok\":true}')\n"
            "sys.exit(3)\n")
    v = execute(d, code, files={"conf/settings.toml": "x = 1\n"}, environment={"FOO": "bar"},
                arguments=["--flag", "value"], timeout_s=60.0)
    out = json.loads(v["stdout"])
    assert out == {"argv": ["main.py", "--flag", "value"], "cwd": "/workspace", "foo": "bar",
                   "cfg": "x = 1\n"}
    assert v["stderr"] == "to stderr\n"
    assert v["exit_code"] == 3 and v["error"] is None and v["timed_out"] is False
    assert v["artifacts"] == {"report.json": b'{"ok":true}'}
    assert isinstance(v["sandbox_id"], str) and len(v["sandbox_id"]) == 36
    no_sandboxes_left(d)


def test_int_timeout_null_fields_and_unknown_fields(d):
    # timeout_s as an int, the optional fields null, fields Flujo does not
    # send (the gateway's tenant_id) ignored, the language in any case.
    body = {"code": "print('hi')", "language": "Python", "files": None, "environment": None,
            "arguments": None, "timeout_s": 5, "tenant_id": "t1", "session_id": None}
    st, data = send(d, body)
    assert st == 200 and data["stdout"] == "hi\n" and data["exit_code"] == 0, data
    # timeout_s 0 means the default, as `timeout_s or default` reads it.
    assert execute(d, "print(1)", timeout_s=0)["stdout"] == "1\n"
    # An empty program is a program.
    assert execute(d, "")["exit_code"] == 0


def test_parallel_runs_keep_to_themselves(d):
    results = {}

    def one(i):
        results[i] = execute(d, f"import os, time; os.makedirs('artifacts'); "
                                f"open('artifacts/i', 'w').write('{i}'); time.sleep(0.3); print({i})",
                             arguments=[str(i)])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(6):
        assert results[i]["stdout"] == f"{i}\n" and results[i]["artifacts"] == {"i": str(i).encode()}
    assert len({r["sandbox_id"] for r in results.values()}) == 6
    no_sandboxes_left(d)


# ---- files --------------------------------------------------------------------


def test_files_are_text_relative_to_the_workspace(d):
    files = {"a.txt": "alpha", "deep/er/b.txt": "béta ✓\n", "./c//d.txt": "gamma",
             "empty.txt": ""}
    code = ("import os\n"
            "for p in ['a.txt', 'deep/er/b.txt', 'c/d.txt', 'empty.txt']:\n"
            "    print(p, repr(open(p, encoding='utf-8').read()), oct(os.stat(p).st_mode & 0o777))\n")
    v = execute(d, code, files=files)
    assert v["stdout"].splitlines() == ["a.txt 'alpha' 0o644", "deep/er/b.txt 'béta ✓\\n' 0o644",
                                        "c/d.txt 'gamma' 0o644", "empty.txt '' 0o644"]
    # A file named like the entry point replaces the code (the reference
    # writes main.py first, then the files).
    v = execute(d, "print('from code')", files={"main.py": "print('from files')"})
    assert v["stdout"] == "from files\n"


@pytest.mark.parametrize("name", ["/etc/passwd", "../x", "..", "a/../../x", "a/..", "./../x",
                                  "a/b/../../../x", "x/..", ".", "", "//x", "a/./../../b",
                                  "a/../b"])
def test_traversal_is_refused(d, name):
    err = refused(d, payload("print(1)", files={"ok.txt": "fine", name: "pwned"}))
    assert err == f"Invalid file path: {name}"


def test_code_larger_than_an_exec_request(d):
    big = "# " + "x" * (2 << 20) + "\nprint('big ok')\n"
    v = execute(d, big)
    assert v["stdout"] == "big ok\n" and v["exit_code"] == 0
    # A file where a directory must go: the preparation fails, Flujo-shaped.
    st, data = send(d, payload("print(1)", files={"a": "file", "a/b": "under a file"}))
    v = client_view(st, data)
    assert st >= 400 and v["exit_code"] == 1 and v["error"].startswith("Failed to prepare files: ")
    assert data["sandbox_id"]
    no_sandboxes_left(d)


# ---- arguments and environment -------------------------------------------------


def test_arguments_are_passed_verbatim(d):
    args = ["--x", "a b", "", "$HOME", "'q'", "*", "é", "-"]
    v = execute(d, "import sys, json; print(json.dumps(sys.argv[1:]))", arguments=args)
    assert json.loads(v["stdout"]) == args


def test_environment_is_given_and_nothing_of_the_host_leaks(d):
    env = {"FOO": "bar", "EMPTY": "", "WITH_EQ": "a=b", "UNI": "ü"}
    v = execute(d, "import os, json; print(json.dumps(dict(os.environ)))", environment=env)
    seen = json.loads(v["stdout"])
    for k, val in env.items():
        assert seen[k] == val
    assert SECRET not in seen and "do-not-leak" not in v["stdout"]
    assert not any(k.startswith("CELLA_") for k in seen), seen
    assert seen["HOME"] == "/workspace"
    # The program's PATH is the caller's to set; the interpreter is found anyway.
    v = execute(d, "import os; print(os.environ['PATH'])", environment={"PATH": "/nowhere"})
    assert v["stdout"] == "/nowhere\n" and v["exit_code"] == 0
    err = refused(d, payload("print(1)", environment={"1BAD": "x"}))
    assert "1BAD" in err


# ---- timeouts -----------------------------------------------------------------


@pytest.mark.parametrize("timeout_s", [2, 1.5])
def test_timeout_answers_in_time_with_the_output_so_far(d, timeout_s):
    code = ("import sys, time, subprocess\n"
            "print('before', flush=True)\n"
            "print('err before', file=sys.stderr, flush=True)\n"
            "subprocess.Popen(['sleep', '300'])\n"
            "time.sleep(300)\n")
    t0 = time.monotonic()
    st, data = send(d, payload(code, timeout_s=timeout_s))
    took = time.monotonic() - t0
    v = client_view(st, data)
    assert st == 200, data
    assert took < timeout_s + 3, took
    assert took > timeout_s * 0.5, took
    assert data["exit_code"] == 124 and type(data["exit_code"]) is int
    assert v["timed_out"] is True and v["error"] == "Execution timed out"
    assert v["stdout"] == "before\n" and v["stderr"] == "err before\n"
    no_sandboxes_left(d)


def many_files(n=3000):
    """Small files in 50 directories: each is a tar entry the agent makes,
    so staging them takes a while (seconds under load)."""
    return {f"d{i % 50}/f{i}.txt": "x" for i in range(n)}


COUNT = "import os\nprint(sum(len(f) for _, _, f in os.walk('.')))\n"


def test_staging_many_files_keeps_to_the_timeout(d):
    # Staging the files counts against timeout_s: the answer comes within
    # it (the bound only catches a hang past it, generously), timed out as
    # a run is, or the program's if staging was fast enough.
    t0 = time.monotonic()
    st, data = send(d, payload(COUNT, files=many_files(), timeout_s=0.5))
    took = time.monotonic() - t0
    v = client_view(st, data)
    assert st == 200, data
    assert took < 0.5 + 3, took
    if v["timed_out"]:
        assert data["exit_code"] == 124 and v["error"] == "Execution timed out", data
        assert v["stdout"] == "" and v["stderr"] == "", data
    else:
        assert v["exit_code"] == 0 and v["stdout"] == "3001\n", data
    no_sandboxes_left(d)
    # With room, every file is there (and main.py beside them).
    v = execute(d, COUNT, files=many_files(), timeout_s=60)
    assert v["exit_code"] == 0 and v["stdout"] == "3001\n", v


def test_a_signal_is_an_integer_exit_code(d):
    v = execute(d, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert v["exit_code"] == 137 and v["error"] is None and not v["timed_out"]
    # The memory limit's kill says so.
    v = execute(d, "b = bytearray(3 << 30)")
    assert v["exit_code"] == 137 and v["error"].startswith("Out of memory")


def test_output_past_the_cap_is_truncated_not_lost(d):
    st, data = send(d, payload("import sys; sys.stdout.write('x' * (3 << 20)); print('done', file=sys.stderr)"))
    assert st == 200 and data["exit_code"] == 0 and data["truncated"] is True
    assert 0 < len(data["stdout"]) <= 1 << 20 and data["stderr"] == "done\n"


def test_programs_reopen_their_own_stdio(d):
    v = execute(d, "echo warn > /dev/stderr; cat /dev/stdin; echo ok", language="bash")
    assert v["stderr"] == "warn\n" and v["stdout"] == "ok\n" and v["exit_code"] == 0


# ---- artifacts ----------------------------------------------------------------


def test_big_artifacts_after_a_timeout_still_answer_in_time(d):
    # 60 MiB of artifacts left by a program that then times out: reading
    # them must not push the answer past what the client waits for.
    code = ("import os, time\n"
            "os.makedirs('artifacts')\n"
            "for i in range(6):\n"
            "    open(f'artifacts/{i}.bin', 'wb').write(os.urandom(10 << 20))\n"
            "print('written', flush=True)\n"
            "time.sleep(60)\n")
    t0 = time.monotonic()
    st, data = send(d, payload(code, timeout_s=4))
    took = time.monotonic() - t0
    v = client_view(st, data)
    assert st == 200 and v["timed_out"] and v["stdout"] == "written\n", data["stdout"]
    assert took < 4 + 2, took
    # Either all of them came in time, or none (null); the error stays the
    # contract's own.
    assert v["error"] == "Execution timed out"
    assert data["artifacts"] is None or len(v["artifacts"]) == 6
    no_sandboxes_left(d)



def test_artifacts_nested_binary_and_odd(d):
    blob = bytes(range(256)) * 4 + b"\0\xff"
    code = ("import os\n"
            "os.makedirs('artifacts/a/b/c', exist_ok=True)\n"
            "os.makedirs('artifacts/emptydir', exist_ok=True)\n"
            f"open('artifacts/a/b/c/blob.bin', 'wb').write({blob!r})\n"
            "open('artifacts/top.txt', 'w').write('top')\n"
            "open('artifacts/empty', 'w').close()\n"
            "open('artifacts/résumé ünï.txt', 'w').write('u')\n"
            "os.symlink('/etc/passwd', 'artifacts/link')\n"
            "os.mkfifo('artifacts/fifo')\n"
            "open('not-an-artifact.txt', 'w').write('no')\n")
    v = execute(d, code)
    assert v["error"] is None, v
    assert v["artifacts"] == {"a/b/c/blob.bin": blob, "top.txt": b"top", "empty": b"",
                              "résumé ünï.txt": b"u"}


def test_no_artifacts(d):
    assert execute(d, "import os; os.makedirs('artifacts')")["artifacts"] == {}
    assert execute(d, "print(1)")["artifacts"] == {}
    # A file where the directory goes is no directory of artifacts.
    assert execute(d, "open('artifacts', 'w').write('x')")["artifacts"] == {}


def test_artifacts_after_a_timeout_and_a_failure(d):
    code = ("import os, time\n"
            "os.makedirs('artifacts')\n"
            "open('artifacts/partial.txt', 'w').write('so far')\n"
            "time.sleep(60)\n")
    v = execute(d, code, timeout_s=1)
    assert v["timed_out"] and v["artifacts"] == {"partial.txt": b"so far"}
    v = execute(d, "import os; os.makedirs('artifacts'); open('artifacts/x', 'w').write('1'); 1/0")
    assert v["exit_code"] == 1 and "ZeroDivisionError" in v["stderr"]
    assert v["artifacts"] == {"x": b"1"}


def test_artifacts_past_the_limits(d):
    code = ("import os\n"
            "os.makedirs('artifacts')\n"
            "with open('artifacts/huge.bin', 'wb') as f:\n"
            "    f.truncate(65 << 20)\n"
            "print('ran')\n")
    st, data = send(d, payload(code))
    v = client_view(st, data)
    assert st == 200 and v["stdout"] == "ran\n" and v["exit_code"] == 0
    assert data["artifacts"] is None and "64 MiB" in v["error"], v["error"]
    code = ("import os\n"
            "os.makedirs('artifacts')\n"
            "for i in range(10001):\n"
            "    open(f'artifacts/{i}', 'w').close()\n")
    st, data = send(d, payload(code))
    v = client_view(st, data)
    assert data["artifacts"] is None and "10000" in v["error"], v["error"]
    no_sandboxes_left(d)


# ---- languages ----------------------------------------------------------------


def test_unsupported_language(d):
    assert refused(d, payload("x", language="cobol")) == "Unsupported language: cobol"
    # The language is checked before the files, as the reference does.
    assert refused(d, payload("x", language="ruby", files={"/abs": "x"})) == \
        "Unsupported language: ruby"


def test_node_and_bash(d):
    v = execute(d, "const fs = require('fs'); fs.mkdirSync('artifacts');"
                   "fs.writeFileSync('artifacts/n.txt', 'node');"
                   "console.log(process.argv.slice(2).join(','), process.env.FOO)",
                language="node", arguments=["a", "b"], environment={"FOO": "f"})
    assert v["stdout"] == "a,b f\n" and v["artifacts"] == {"n.txt": b"node"}
    v = execute(d, 'echo "$0 $1 $FOO ${BASH_VERSION:+bash}"; mkdir -p artifacts; '
                   'printf sh > artifacts/s.txt; exit 5',
                language="bash", arguments=["x"], environment={"FOO": "f"})
    assert v["stdout"] == "main.sh x f bash\n" and v["exit_code"] == 5
    assert v["artifacts"] == {"s.txt": b"sh"}
    v = execute(d, "echo sh; cat data.txt", language="shell", files={"data.txt": "d\n"})
    assert v["stdout"] == "sh\nd\n"


# ---- malformed bodies ----------------------------------------------------------


@pytest.mark.parametrize("raw", ["{", "not json", "[]", "\"code\"", "null", "{\"code\": 1,}"])
def test_malformed_json_is_flujo_shaped(d, raw):
    assert "invalid request" in refused(d, raw=raw)


@pytest.mark.parametrize("field,value", [
    ("code", 1), ("code", None), ("language", ["python"]), ("files", ["a"]),
    ("files", {"a": 1}), ("environment", ["A=B"]), ("environment", {"A": 1}),
    ("arguments", "--x"), ("arguments", [1]), ("timeout_s", "60"), ("timeout_s", True),
    ("timeout_s", -1)])
def test_wrong_types_are_flujo_shaped(d, field, value):
    body = payload("print(1)")
    body[field] = value
    assert field in refused(d, body)


def test_missing_fields_and_session_ids(d):
    assert "code" in refused(d, {"language": "python"})
    assert "language" in refused(d, {"code": "print(1)"})
    assert "code" in refused(d, raw="")
    # A session_id makes it the gateway's persistent session (test_gateway.py).
    st, b = send(d, {**payload("print(1)"), "session_id": "s1", "tenant_id": "t"})
    assert st == 200 and b["stdout"] == "1\n" and b["exit_code"] == 0 and b["sandbox_id"], b


# ---- auth, limits ---------------------------------------------------------------


TOKEN = "flujo-token-0123456789abcdef"
OTHER = "other-token-0123456789abcdef"


@pytest.fixture(scope="module")
def authd(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("auth")
    tok = tmp / "tokens"
    tok.write_text(f"{TOKEN} alice\n{OTHER} bob\n")
    os.chmod(tok, 0o600)
    cfg = tmp / "cella.yaml"
    cfg.write_text("max_body_bytes: 65536\nmax_exec_timeout_ms: 3000\n"
                   "default_exec_timeout_ms: 3000\npool_size: 1\n")
    daemon = Daemon(tokens=str(tok), config=str(cfg)).start()
    yield daemon
    daemon.close()


def test_auth_on(authd):
    assert refused(authd, payload("print(1)"), want=401).startswith("unauthorized")
    assert refused(authd, payload("print(1)"), token="wrong-token-0123456789abcdef",
                   want=401).startswith("unauthorized")
    # The run belongs to the caller's tenant, and only while it runs.
    seen = {}

    def watch():
        seen["alice"] = wait_until(lambda: authd.get("/v1/sandboxes", token=TOKEN)[1]["sandboxes"])
        seen["bob"] = authd.get("/v1/sandboxes", token=OTHER)[1]["sandboxes"]

    t = threading.Thread(target=watch)
    t.start()
    st, data = send(authd, payload("import time; time.sleep(1.5); print('ok')"), token=TOKEN)
    t.join()
    assert st == 200 and data["stdout"] == "ok\n", data
    assert [s["sandbox_id"] for s in seen["alice"]] == [data["sandbox_id"]]
    assert seen["bob"] == []
    no_sandboxes_left(authd, token=TOKEN)


def test_auth_off_needs_no_token(d):
    assert execute(d, "print('open')")["stdout"] == "open\n"
    # Users who set the key through settings may send it masked: with auth
    # off (no tokens file, loopback) any bearer is let through.
    st, data = send(d, payload("print('masked')"), token="sk-****************")
    assert st == 200 and data["stdout"] == "masked\n"


def test_wrong_method_is_flujo_shaped(d):
    st, data = d.get("/execute")
    assert st == 405 and isinstance(data.get("error"), str), data
    assert isinstance(data["exit_code"], int)


def test_limits_are_flujo_shaped(authd):
    # A body past max_body_bytes: the server's own refusal, in Flujo's shape.
    err = refused(authd, payload("#" + "x" * 70000), token=TOKEN, want=413)
    assert "65536" in err
    # timeout_s is clamped to the daemon's max_exec_timeout_ms (3 s here).
    t0 = time.monotonic()
    st, data = send(authd, payload("import time; time.sleep(60)", timeout_s=600), token=TOKEN)
    assert st == 200 and data["timed_out"] and data["exit_code"] == 124
    assert time.monotonic() - t0 < 3 + 3


def test_missing_image_is_flujo_shaped(tmp_path):
    cfg = tmp_path / "cella.yaml"
    cfg.write_text("image_allowlist: [shell]\npool_size: 0\n")
    daemon = Daemon(config=str(cfg)).start()
    try:
        err = refused(daemon, payload("print(1)"))
        assert "python" in err and "catalog" in err
    finally:
        daemon.close()


# ---- network ------------------------------------------------------------------


def test_network_is_off(d):
    code = ("import socket\n"
            "for host, port in [('1.1.1.1', 53), ('8.8.8.8', 443), ('127.0.0.1', %d)]:\n"
            "    try:\n"
            "        socket.create_connection((host, port), timeout=3).close()\n"
            "        print(host, 'connected')\n"
            "    except OSError as e:\n"
            "        print(host, 'refused', e.errno)\n"
            "try:\n"
            "    socket.getaddrinfo('example.com', 80)\n"
            "    print('dns ok')\n"
            "except OSError:\n"
            "    print('dns failed')\n" % d.port)
    v = execute(d, code)
    assert "connected" not in v["stdout"] and "dns ok" not in v["stdout"], v["stdout"]
    assert v["stdout"].count("refused") == 3
