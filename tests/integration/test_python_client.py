"""The Python client (clients/python) against a live daemon: every method,
the errors it raises, streaming, files both ways, typed runs, and that
`pip install clients/python` works with no package index."""
import datetime as dt
import os
import subprocess
import sys

import pytest

from daemon import Daemon, wait_until, tokens_file

CLIENTS = os.path.join(os.path.dirname(__file__), "../../clients/python")
sys.path.insert(0, CLIENTS)
import cella  # noqa: E402

TOKEN = "tok-py-client-0123456789abcdef"
OTHER = "tok-py-other-0123456789abcdefg"


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    tokens = tokens_file(tmp_path_factory.mktemp("pyclient"), {TOKEN: "alice", OTHER: "bob"})
    daemon = Daemon(tokens=tokens).start()
    yield daemon
    daemon.close()


@pytest.fixture
def client(d):
    return cella.Client(d.url, TOKEN)


@pytest.fixture
def sb(client):
    with client.create("python", name="py-client") as s:
        yield s


def test_defaults_come_from_the_environment(d, monkeypatch):
    monkeypatch.setenv("CELLA_URL", d.url)
    monkeypatch.setenv("CELLA_TOKEN", TOKEN)
    c = cella.Client()
    assert c.url == d.url and c.token == TOKEN and c.healthy()
    assert any(i["name"] == "python" for i in c.catalog())


def test_exec_shapes(sb):
    r = sb.exec(["python3", "-c", "print(6*7)"])
    assert (r.stdout, r.exit_code, r.success, r.timed_out) == ("42\n", 0, True, False)
    r = sb.exec("sh -c 'echo out; echo err >&2; exit 3'")
    assert (r.stdout, r.stderr, r.exit_code, r.success) == ("out\n", "err\n", 3, False)
    with pytest.raises(cella.CellaError) as e:
        r.check()
    assert "exited 3" in str(e.value)
    r = sb.exec(["sh", "-c", 'cat; echo " $K"; pwd'], stdin=b"in", env={"K": "v"}, workdir="/tmp")
    assert r.stdout == "in v\n/tmp\n"
    r = sb.exec(["sh", "-c", "echo before; sleep 30"], timeout=0.5)
    assert r.timed_out and r.exit_code == 124 and r.stdout == "before\n"
    r = sb.exec(["sh", "-c", "kill -9 $$"])
    assert r.exit_code is None and r.signal == 9
    with pytest.raises(ValueError):
        sb.exec([])


def test_stream_yields_output_then_exit(sb):
    events = list(sb.stream(["sh", "-c", "echo one; echo two >&2; echo three"]))
    kinds = [e.kind for e in events]
    assert kinds[-1] == "exit" and events[-1].result.exit_code == 0
    out = "".join(e.data for e in events if e.kind == "stdout")
    err = "".join(e.data for e in events if e.kind == "stderr")
    assert out == "one\nthree\n" and err == "two\n"


def test_leaving_a_stream_kills_the_command(sb):
    gen = sb.stream(["sh", "-c", "echo started; exec sleep 300"])
    first = next(gen)
    assert first.kind == "stdout" and first.data == "started\n"
    gen.close()
    # The daemon sees the connection go and kills the command.
    wait_until(lambda: sb.refresh().exec_in_flight == 0, limit=30)


def test_files_round_trip(sb, tmp_path):
    assert sb.write_file("dir/a.txt", "héllo\n") == 7
    assert sb.read_text("/workspace/dir/a.txt") == "héllo\n"
    blob = bytes(range(256)) * 1000
    sb.write_file("/workspace/b.bin", blob, mode="0600")
    assert sb.read_file("b.bin") == blob
    assert sb.stat("b.bin").mode == "0600"
    local = tmp_path / "up.bin"
    local.write_bytes(os.urandom(3 << 20))
    assert sb.upload(local, "up/up.bin") == 3 << 20
    assert sb.download("up/up.bin", tmp_path / "down.bin") == 3 << 20
    assert (tmp_path / "down.bin").read_bytes() == local.read_bytes()
    sb.download("/workspace/dir/a.txt", tmp_path)                  # into a directory
    assert (tmp_path / "a.txt").read_text() == "héllo\n"
    # Odd names survive the URL.
    for name in ("a b#c?.txt", "100%.txt", "ünï"):
        sb.write_file(f"odd/{name}", name)
        assert sb.read_text(f"odd/{name}") == name
    with pytest.raises(cella.CellaError) as e:
        sb.write_file("nodir/x", "x", parents=False)
    assert e.value.code == "S211" and e.value.fix == {"parents": True}


def test_a_failed_download_leaves_nothing(sb, tmp_path):
    with pytest.raises(cella.CellaError) as e:
        sb.download("/workspace/missing", tmp_path / "x")
    assert e.value.code == "S211" and e.value.status == 404
    assert os.listdir(tmp_path) == []


def test_fs_operations(sb):
    assert sb.mkdir("t/u", parents=True) is True
    assert sb.mkdir("t/u", parents=True) is False
    sb.write_file("t/u/f.py", "x = 1  # TODO\n")
    sb.write_file("t/g.txt", "nothing\n")
    assert [e.name for e in sb.ls("t")] == ["g.txt", "u"]
    info = sb.stat("t/u")
    assert info.is_dir and not info.is_symlink and info.modified.year >= 2024
    assert sb.exists("t/g.txt") and not sb.exists("t/none")
    g = sb.grep("TODO", "/workspace/t")
    assert [(m.path, m.line) for m in g] == [("/workspace/t/u/f.py", 1)] and not g.truncated
    assert sb.glob("**/*.py", "/workspace/t") == ["/workspace/t/u/f.py"]
    res = sb.sed("TODO", "DONE", files=["/workspace/t/u/f.py"])
    assert res["total_replacements"] == 1
    sb.mv("t/g.txt", "t/h.txt")
    assert sb.chmod("t/h.txt", "0640") == 1
    with pytest.raises(cella.CellaError) as e:
        sb.rm("t")
    assert e.value.code == "S214"
    sb.rm("t", recursive=True)
    assert not sb.exists("t")


def test_errors_carry_code_fix_and_note(client, d):
    with pytest.raises(cella.CellaError) as e:
        client.create("no-such-image")
    assert e.value.code == "S100" and e.value.status == 400 and "python" in e.value.message
    with pytest.raises(cella.CellaError) as e:
        client.sandbox("ddb3cf83-3af9-4c0d-9598-f10d5a5d51ab")
    assert e.value.code == "S002" and e.value.fix_note
    with pytest.raises(cella.CellaError) as e:
        cella.Client(d.url, "wrong-token-0123456789abcdef").list()
    assert e.value.code == "S005" and e.value.status == 401
    with pytest.raises(cella.CellaError) as e:
        cella.Client("http://127.0.0.1:1", TOKEN).list()
    assert e.value.code == "connection"


def test_tenants_and_stop(client, d):
    s = client.create("shell")
    assert s.id in [x.sandbox_id for x in client.list()]
    bob = cella.Client(d.url, OTHER)
    assert s.id not in [x.sandbox_id for x in bob.list()]
    with pytest.raises(cella.CellaError) as e:
        bob.sandbox(s.id)
    assert e.value.code == "S002"
    assert client.sandbox(s.id).info.image == "shell"
    s.stop(wait=True)
    assert s.id not in [x.sandbox_id for x in client.list()]
    with s:            # a context exit on a stopped sandbox is quiet
        pass


def test_one_shot_and_typed_runs(client):
    r = client.run("import sys; print(sys.stdin.read())", stdin="hi", files={"d.txt": "data"})
    assert r.stdout == "hi\n" and r.success and r.sandbox_id is None
    r = client.run("cat /workspace/d.txt", image="shell", lang="shell", files={"d.txt": "data"})
    assert r.stdout == "data"
    r = client.run("end = start + step\nn = len(open(blob, 'rb').read())",
                   inputs={"start": dt.datetime(2024, 1, 1), "step": dt.timedelta(days=1),
                           "blob": b"\x00\x01\x02"},
                   outputs={"end": dt.datetime, "n": int})
    assert r.success, (r.stderr, r.outputs_error)
    assert r.outputs == {"end": "2024-01-02T00:00:00", "n": 3} and r.attempts == 1
    r2 = client.run("end = start + step\nn = len(open(blob, 'rb').read())",
                    inputs={"start": dt.datetime(2024, 1, 1), "step": dt.timedelta(days=1),
                            "blob": b"\x00\x01\x02"},
                    outputs={"end": "datetime", "n": "int"})
    assert r2.cached and r2.outputs == r.outputs
    r = client.run(command=["/bin/sh", "-c", "exit 3"], retries=1, cache="disable")
    assert r.exit_code == 3 and r.attempts == 2 and not r.success
    with pytest.raises(ValueError):
        client.run()
    with pytest.raises(TypeError):
        client.run("x = 1", inputs={"bad": object()})


def test_pip_installs_with_no_index(tmp_path):
    target = tmp_path / "site"
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-cache-dir",
                        "--quiet", "--target", str(target), CLIENTS],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([sys.executable, "-c", "import cella, sys; "
                        "print(cella.__version__, cella.__file__)"],
                       capture_output=True, text=True, env={"PYTHONPATH": str(target)},
                       timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("0.1.0 " + str(target)), p


def test_every_function_is_annotated():
    """The package ships py.typed, so every function and method in it has
    its return and each parameter but self/cls annotated (an AST scan of
    every def), and every annotation resolves (typing.get_type_hints)."""
    import ast
    import importlib
    import inspect
    import typing

    pkg = os.path.join(CLIENTS, "cella")
    modules = sorted(f[:-3] for f in os.listdir(pkg) if f.endswith(".py"))
    assert {"__init__", "_http", "client", "errors", "results", "sandbox"} <= set(modules)
    missing, scanned = [], 0
    for m in modules:
        path = os.path.join(pkg, m + ".py")
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            scanned += 1
            a = node.args
            params = a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]
            bare = [p.arg for p in params if p.annotation is None and p.arg not in ("self", "cls")]
            if node.returns is None or bare:
                missing.append(f"{m}.py:{node.lineno} {node.name}"
                               f"{' (no return annotation)' if node.returns is None else ''}"
                               f"{f' (bare parameters {bare})' if bare else ''}")
    assert scanned > 50 and missing == [], (scanned, missing)

    # (sandbox.py imports Client only under TYPE_CHECKING, against the cycle.)
    names = {n: getattr(cella, n) for n in dir(cella) if not n.startswith("_")}
    resolved = 0
    for m in modules:
        mod = importlib.import_module("cella" if m == "__init__" else f"cella.{m}")
        for obj in vars(mod).values():
            if getattr(obj, "__module__", None) != mod.__name__:
                continue
            if inspect.isfunction(obj):
                typing.get_type_hints(obj, localns=names)
                resolved += 1
            elif inspect.isclass(obj):
                for member in vars(obj).values():
                    fn = member.fget if isinstance(member, property) else \
                        getattr(member, "__func__", member)
                    if inspect.isfunction(fn) and fn.__module__ == mod.__name__:
                        typing.get_type_hints(fn, localns=names)
                        resolved += 1
    assert resolved > 50, resolved
    hints = typing.get_type_hints(cella.results.GrepResult.__iter__)
    assert hints["return"] == typing.Iterator[cella.results.GrepMatch]



def test_errors_pickle():
    import pickle
    e = cella.CellaError("S211", "file not found: /workspace/x", status=404,
                         fix={"parents": True}, fix_note="resend", retryable=False)
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is cella.CellaError and str(back) == str(e)
    assert (back.code, back.message, back.status, back.fix, back.fix_note) == \
        ("S211", "file not found: /workspace/x", 404, {"parents": True}, "resend")
