"""Flyte-style typed one-shot runs on POST /v1/run end to end: typed inputs
staged at /var/inputs, declared outputs collected from /var/outputs, the
auto-IO, verbatim and command modes, the exit_code file, retries in fresh
sandboxes, the result cache, timeouts and the S001s (docs/api.md, "Typed
runs"; flyte-sandboxing.md and BEHAVIOUR-NOTES §5)."""
import base64
import json
import os
import pathlib
import subprocess
import tempfile
import uuid

import pytest

from daemon import Daemon, err_code

A = "tok-alice-0123456789abcdef"
B = "tok-bob-0123456789abcdefgh"


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("typed")
    tokens = tmp / "tokens"
    tokens.write_text(f"{A} alice\n{B} bob\n")
    os.chmod(tokens, 0o600)
    daemon = Daemon(tokens=str(tokens), args=("--pool-size", "2")).start()
    yield daemon
    daemon.close()


def run(d, token=A, **body):
    body.setdefault("image", "python")
    return d.post("/v1/run", body, token=token)


def ok(d, token=A, **body):
    st, b = run(d, token=token, **body)
    assert st == 200, (st, b)
    return b


def b64(data):
    return base64.b64encode(data).decode()


def fresh():
    """A comment that makes the code unique: a run no earlier test cached."""
    return f"# {uuid.uuid4()}\n"


def test_auto_io_every_type_in_and_out(d):
    code = fresh() + """
n_out = n * 2
f_out = f + 0.5
s_out = s.upper()
b_out = not b
dt_out = dt + td
td_out = -td
file_text = pathlib.Path(doc).read_text()
pathlib.Path('/var/outputs/blob').write_bytes(b'\\x00\\xff' + file_text.encode())
kinds = ','.join(type(v).__name__ for v in (n, f, s, b, dt, td, doc))
"""
    b = ok(d, code="import pathlib\n" + code, inputs={
        "n": {"type": "int", "value": -21},
        "f": {"type": "float", "value": 0.1},
        "s": {"type": "str", "value": "héllo\r\nwörld"},
        "b": {"type": "bool", "value": True},
        "dt": {"type": "datetime", "value": "2024-01-31T23:59:59.5Z"},
        "td": {"type": "timedelta", "value": "P1DT1.25S"},
        "doc": {"type": "file", "value": {"content_b64": b64(b"line\n")}},
    }, outputs={"n_out": "int", "f_out": "float", "s_out": "str", "b_out": "bool",
                "dt_out": "datetime", "td_out": "timedelta", "file_text": "str", "blob": "file",
                "kinds": "str"})
    assert b["success"] and b["exit_code"] == 0 and b["outputs_error"] is None, b
    o = b["outputs"]
    assert o["n_out"] == -42 and o["f_out"] == 0.6 and o["s_out"] == "HÉLLO\r\nWÖRLD"
    assert o["b_out"] is False
    # The datetime keeps its offset; Python's isoformat is the canonical form.
    assert o["dt_out"] == "2024-02-02T00:00:00.750000+00:00"
    assert o["td_out"] == -86401.25
    assert o["file_text"] == "line\n"
    assert base64.b64decode(o["blob"]["content_b64"]) == b"\x00\xffline\n"
    # Inputs arrive with their Python types; a file as its path.
    assert o["kinds"] == "int,float,str,bool,datetime,timedelta,str"
    # Outputs come back in declaration order.
    assert list(o) == ["n_out", "f_out", "s_out", "b_out", "dt_out", "td_out", "file_text",
                       "blob", "kinds"]
    assert (b["attempts"], b["cached"], b["sandbox_id"]) == (1, False, None)


def test_auto_io_as_flyte_documents_it(d):
    b = ok(d, code=fresh() + "result = x * 2", inputs={"x": {"type": "int", "value": 21}},
           outputs={"result": "int"})
    assert b["outputs"] == {"result": 42}
    # No last-expression rule: variables are what counts; print still prints;
    # sys.exit(0) ends the code but its outputs are written.
    b = ok(d, code=fresh() + "import sys\ntotal = sum(range(n + 1)) if conditional else 0\n"
                             "print('done')\nsys.exit(0)\nnever = 1",
           inputs={"n": {"type": "int", "value": 10}, "conditional": {"type": "bool", "value": True}},
           outputs={"total": "int"})
    assert (b["outputs"], b["stdout"]) == ({"total": 55}, "done\n")
    # A number of seconds is a timedelta too; whole ones come back as integers.
    b = ok(d, code=fresh() + "window_end = dt + delta\nhalf = delta / 2",
           inputs={"dt": {"type": "datetime", "value": "2024-01-01"},
                   "delta": {"type": "timedelta", "value": 86400}},
           outputs={"window_end": "datetime", "half": "timedelta"})
    assert b["outputs"] == {"window_end": "2024-01-02T00:00:00", "half": 43200}


def test_auto_io_failure_keeps_the_traceback(d):
    b = ok(d, code=fresh() + "y = 1\nraise ValueError('boom')", outputs={"y": "int"})
    assert b["exit_code"] == 1 and not b["success"]
    assert "ValueError: boom" in b["stderr"] and '"/tmp/run.py", line' in b["stderr"]
    # A failed run's outputs are not an error of their own.
    assert b["outputs_error"] is None and b["outputs"] == {}


def test_verbatim_mode(d):
    script = fresh() + """
import json, pathlib
payload = json.loads(pathlib.Path("/var/inputs/payload").read_text())
total = sum(payload["values"])
pathlib.Path("/var/outputs/total").write_text(str(total))
pathlib.Path("/var/outputs/scale").write_text(pathlib.Path("/var/inputs/scale").read_text() + "\\n")
"""
    b = ok(d, code=script, auto_io=False,
           inputs={"payload": {"type": "file", "value": {"content_b64": b64(b'{"values": [1, 2, 3, 4, 5]}')}},
                   "scale": {"type": "float", "value": 2}},
           outputs={"total": "int", "scale": "float"})
    assert b["success"], b
    # Scalars are staged as their canonical text; a trailing newline is fine on reading.
    assert b["outputs"] == {"total": 15, "scale": 2.0}
    # No wrapper in verbatim mode: a variable named like an output is not collected.
    b = ok(d, code=fresh() + "total = 15", auto_io=False, outputs={"total": "int"})
    assert not b["success"] and "total" in b["outputs_error"]
    assert "/var/outputs/total" in b["outputs_error"]
    # Other languages default to verbatim.
    b = ok(d, image="shell", lang="shell", code="tr a-z A-Z < /var/inputs/word > /var/outputs/word",
           inputs={"word": {"type": "str", "value": "shout"}}, outputs={"word": "str"})
    assert b["outputs"] == {"word": "SHOUT"}, b


def test_command_mode(d):
    data = b"line 1\n\nline 2\n"
    b = ok(d, image="shell",
           command=["/bin/bash", "-c", "grep -c . /var/inputs/data_file > /var/outputs/line_count "
                                       "|| echo 0 > /var/outputs/line_count"],
           inputs={"data_file": {"type": "file", "value": {"content_b64": b64(data)}}},
           outputs={"line_count": "str"})
    assert b["success"] and b["outputs"] == {"line_count": "2\n"}, b
    # arguments follow command, and may name the staged inputs.
    b = ok(d, image="shell", command=["/bin/sh", "-c", 'cat "$1" "$2" > /var/outputs/joined', "sh"],
           arguments=["/var/inputs/a", "/var/inputs/b"],
           inputs={"a": {"type": "str", "value": "x"}, "b": {"type": "int", "value": 7}},
           outputs={"joined": "str"})
    assert b["outputs"] == {"joined": "x7"}, b
    # No shell unless asked: the words are the program's argv.
    b = ok(d, image="shell", command=["echo", "$HOME", "a b"])
    assert b["stdout"] == "$HOME a b\n"
    b = ok(d, image="shell", command=["no-such-program"])
    assert b["exit_code"] == 127 and not b["success"]


@pytest.mark.parametrize("lang", ["bash", "sh", "shell"])
def test_shell_code_runs_under_bash_with_pipefail(d, lang):
    # Flyte's script modes: bash, with set -o pipefail (BEHAVIOUR-NOTES §5).
    b = ok(d, image="shell", lang=lang, code="false | true; echo $?; [[ -n $BASH_VERSION ]] && "
                                              "echo bash; set -o | grep pipefail",
           outputs={"exit_code": "int"}, cache="disable")
    assert b["stdout"].split("\n")[:2] == ["1", "bash"], b
    assert "on" in b["stdout"].split("\n")[2]
    assert b["outputs"] == {"exit_code": 0}
    # A failing stage fails the script's last pipeline, so the run.
    b = ok(d, image="shell", lang=lang, code="grep nothing /var/inputs/missing | cat",
           cache="disable")
    assert b["exit_code"] == 2 and not b["success"], b
    # A plain run (iii's sandbox::run) keeps /bin/sh, as its spec says.
    b = ok(d, image="shell", lang=lang, code="false | true; echo $?")
    assert b["stdout"] == "0\n" and "outputs" not in b


def test_names_are_file_names(d):
    # Flyte's own example: inputs named like the files they are.
    b = ok(d, image="shell", command=["/bin/bash", "-c",
                                      'cat "$0" "$1" > /var/outputs/joined.txt; grep -c def "$1"'],
           arguments=["/var/inputs/solution.py", "/var/inputs/tests.py"],
           inputs={"solution.py": {"type": "file", "value": {"content_b64": b64(b"def f(): pass\n")}},
                   "tests.py": {"type": "file", "value": {"content_b64": b64(b"def test(): f()\n")}}},
           outputs={"exit_code": "str", "joined.txt": "str"})
    assert b["success"], b
    assert b["outputs"] == {"exit_code": "0", "joined.txt": "def f(): pass\ndef test(): f()\n"}
    assert b["stdout"] == "1\n"
    # Any safe file name, quotes and spaces included; in verbatim mode
    # '__' names are files like any other.
    odd = "it's a \\ name"
    b = ok(d, image="shell", lang="bash", code='cp "/var/inputs/$N" "/var/outputs/__out-1"',
           env={"N": odd}, inputs={odd: {"type": "str", "value": "odd"}},
           outputs={"__out-1": "str"})
    assert b["outputs"] == {"__out-1": "odd"}, b
    # auto-IO: identifiers are variables, other names only files.
    b = ok(d, code=fresh() + "import pathlib\n"
                             "rows = pathlib.Path('/var/inputs/data.csv').read_text().split()\n"
                             "n = len(rows) * k\n"
                             "pathlib.Path('/var/outputs/report.txt').write_text(rows[0])\n"
                             "print(sorted(v for v in globals() if not v.startswith('__')))",
           inputs={"data.csv": {"type": "str", "value": "a,1\nb,2\n"},
                   "k": {"type": "int", "value": 10}},
           outputs={"n": "int", "report.txt": "str"})
    assert b["success"], b
    assert b["outputs"] == {"n": 20, "report.txt": "a,1"}
    assert b["stdout"] == "['k', 'n', 'pathlib', 'rows']\n"
    # A non-identifier output the code did not write names its file.
    b = ok(d, code=fresh() + "x = 1", outputs={"x-y": "int"})
    assert b["outputs_error"] == "declared output 'x-y' was not written to /var/outputs/x-y"


def tar_of(*entries):
    """A tar archive: (name, bytes) files, (name, None) directories,
    (name, "->target") symlinks."""
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in entries:
            ti = tarfile.TarInfo(name)
            if data is None:
                ti.type = tarfile.DIRTYPE
                ti.mode = 0o755
                t.addfile(ti)
            elif isinstance(data, str):
                ti.type = tarfile.SYMTYPE
                ti.linkname = data[2:]
                t.addfile(ti)
            else:
                ti.size = len(data)
                ti.mode = 0o644
                t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def members(tar_b64):
    import io
    import tarfile
    out = {}
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(tar_b64))) as t:
        for m in t.getmembers():
            name = m.name.rstrip("/")
            if m.isdir():
                out[name] = None
            elif m.issym():
                out[name] = "->" + m.linkname
            else:
                out[name] = t.extractfile(m).read()
    return out


def test_dir_inputs_and_outputs(d):
    src = tar_of(("a.txt", b"A"), ("sub", None), ("sub/b.txt", b"B"), ("ln", "->a.txt"))
    script = ("cd /var/inputs/src && find . | sort && mkdir -p /var/outputs/out/nested && "
              "cp -a . /var/outputs/out/copy && cat a.txt sub/b.txt > /var/outputs/out/nested/c")
    b = ok(d, image="shell", command=["/bin/bash", "-c", script],
           inputs={"src": {"type": "dir", "value": {"tar_b64": b64(src)}}},
           outputs={"out": "dir"})
    assert b["success"], b
    assert b["stdout"] == ".\n./a.txt\n./ln\n./sub\n./sub/b.txt\n"
    assert members(b["outputs"]["out"]["tar_b64"]) == {
        "copy": None, "copy/a.txt": b"A", "copy/ln": "->a.txt", "copy/sub": None,
        "copy/sub/b.txt": b"B", "nested": None, "nested/c": b"AB"}
    # The same run again: from the cache, the same archive.
    again = ok(d, image="shell", command=["/bin/bash", "-c", script],
               inputs={"src": {"type": "dir", "value": {"tar_b64": b64(src)}}},
               outputs={"out": "dir"})
    assert again["cached"] and again["outputs"] == b["outputs"]
    # auto-IO: a dir input is its path, a dir output the code's to fill.
    b = ok(d, code=fresh() + "import os, pathlib\nnames = ','.join(sorted(os.listdir(src)))\n"
                             "pathlib.Path('/var/outputs/res').mkdir()\n"
                             "pathlib.Path('/var/outputs/res/n').write_text(names)\nwhere = src",
           inputs={"src": {"type": "dir", "value": {"tar_b64": b64(src)}},
                   "empty": {"type": "dir", "value": {"tar_b64": ""}}},
           outputs={"names": "str", "res": "dir", "where": "str"})
    assert b["success"], b
    assert b["outputs"]["names"] == "a.txt,ln,sub" and b["outputs"]["where"] == "/var/inputs/src"
    assert members(b["outputs"]["res"]["tar_b64"]) == {"n": b"a.txt,ln,sub"}
    b = ok(d, image="shell", command=["ls", "-A", "/var/inputs/empty"],
           inputs={"empty": {"type": "dir", "value": {"tar_b64": ""}}})
    assert b["success"] and b["stdout"] == "", b
    # Missing, not a directory, too large: output problems.
    b = ok(d, image="shell", command=["sh", "-c", "echo x > /var/outputs/f; mkdir -p /var/outputs/big "
                                                  "&& head -c 9000000 /dev/zero > /var/outputs/big/z"],
           outputs={"gone": "dir", "f": "dir", "big": "dir"})
    assert not b["success"] and b["outputs"] == {}
    assert "declared output 'gone' was not written to /var/outputs/gone" in b["outputs_error"]
    assert "declared output 'f': not a directory" in b["outputs_error"], b["outputs_error"]
    assert "declared output 'big': larger than 8388608 bytes" in b["outputs_error"]


def test_dir_input_refusals(d):
    # The upload's own checks: an archive that climbs out fails the stage step.
    for bad in (tar_of(("../evil", b"x")), tar_of(("ln", "->/tmp"), ("ln/evil", b"x"))):
        st, b = run(d, image="shell", command=["true"],
                    inputs={"src": {"type": "dir", "value": {"tar_b64": b64(bad)}}})
        assert st == 400 and err_code(b) == "S210", (st, b)
        assert b["error"]["fix"]["context"].endswith("`stage`"), b
    # One that is no archive at all, or one cut short, is refused with the
    # request, before a sandbox is made for it.
    good = tar_of(("a.txt", b"x" * 5000))
    for bad in (b"not a tar archive at all, and longer than one block" * 20, good[:1024],
                b"\x00" * 100):
        st, b = run(d, image="shell", command=["true"],
                    inputs={"src": {"type": "dir", "value": {"tar_b64": b64(bad)}}})
        assert st == 400 and err_code(b) == "S001", (st, b)
        assert "inputs.src.value: not a usable tar archive" in b["error"]["message"], b
    for bad in ({"content_b64": ""}, {"tar_b64": "***"}, "x", {"tar_b64": "", "more": 1}):
        st, b = run(d, image="shell", command=["true"],
                    inputs={"src": {"type": "dir", "value": bad}})
        assert st == 400 and err_code(b) == "S001", (bad, st, b)


def test_exit_code_file(d):
    b = ok(d, image="shell", command=["sh", "-c", "echo out; exit 3"],
           outputs={"exit_code": "int"}, keep_sandbox=True)
    assert (b["exit_code"], b["success"], b["outputs"]) == (3, False, {"exit_code": 3}), b
    sid = b["sandbox_id"]
    try:
        st, x = d.exec(sid, token=A, argv=["cat", "/var/outputs/exit_code"])
        assert x["stdout"] == "3"
    finally:
        d.delete(f"/v1/sandboxes/{sid}", token=A)
    # Written after every program, whatever it wrote there itself.
    b = ok(d, code=fresh() + "open('/var/outputs/exit_code', 'w').write('99')",
           outputs={"exit_code": "str"})
    assert b["outputs"] == {"exit_code": "0"} and b["success"]


def test_missing_or_mistyped_declared_output(d):
    b = ok(d, code=fresh() + "a = 1", outputs={"a": "int", "b": "int", "c": "file"})
    assert b["exit_code"] == 0 and not b["success"]
    assert b["outputs"] == {"a": 1}
    assert b["outputs_error"] == ("declared output 'b' was not set by the code; declared output "
                                  "'c' was not written to /var/outputs/c")
    b = ok(d, image="shell", command=["sh", "-c", "echo abc > /var/outputs/n; "
                                                  "echo 2024-02-30 > /var/outputs/when"],
           outputs={"n": "int", "when": "datetime"})
    assert not b["success"]
    assert "declared output 'n' (int): 'abc' is not an integer" in b["outputs_error"]
    assert "declared output 'when' (datetime): '2024-02-30'" in b["outputs_error"]
    b = ok(d, image="shell", command=["mkdir", "/var/outputs/d"], outputs={"d": "file"})
    assert "declared output 'd'" in b["outputs_error"] and "directory" in b["outputs_error"]
    # Output problems are not retried: the program did succeed.
    b = ok(d, code=fresh() + "pass", outputs={"gone": "str"}, retries=3)
    assert b["attempts"] == 1 and not b["success"]


def test_retries_run_in_fresh_sandboxes(d):
    code = fresh() + """
import os, sys
attempt = int(os.environ["CELLA_ATTEMPT"])
leftover = os.path.exists("/workspace/marker")
open("/workspace/marker", "w").write("x")
seen = leftover
sys.exit(0 if attempt == 3 else 1)
"""
    b = ok(d, code=code, retries=5, outputs={"attempt": "int", "seen": "bool"})
    assert b["success"] and b["attempts"] == 3, b
    # Each attempt starts clean: nothing the failed ones left is there.
    assert b["outputs"] == {"attempt": 3, "seen": False}
    b = ok(d, image="shell", command=["sh", "-c", "echo try $CELLA_ATTEMPT; exit 1"], retries=2,
           outputs={"exit_code": "int"})
    assert (b["attempts"], b["success"], b["stdout"]) == (3, False, "try 3\n")
    assert b["outputs"] == {"exit_code": 1}
    b = ok(d, code=fresh() + "x = 1", retries=4, outputs={"x": "int"})
    assert b["attempts"] == 1


def test_timeout(d):
    b = ok(d, code=fresh() + "import time\ntime.sleep(30)", timeout_ms=300,
           outputs={"exit_code": "int", "never": "int"}, retries=1)
    assert (b["timed_out"], b["exit_code"], b["success"], b["attempts"]) == (True, 124, False, 2)
    assert b["outputs"] == {"exit_code": 124} and b["outputs_error"] is None
    # A timed-out run is never cached.
    slow = dict(code=fresh() + "import time\ntime.sleep(30)", timeout_ms=200, cache="auto")
    assert ok(d, **slow)["timed_out"] and ok(d, **slow)["cached"] is False


def test_cache(d):
    body = dict(code=fresh() + "import random\nr = random.random()",
                inputs={"x": {"type": "int", "value": 1}, "y": {"type": "str", "value": "y"}},
                outputs={"r": "float"})
    first = ok(d, **body)
    assert first["cached"] is False and first["attempts"] == 1
    hit = ok(d, **body)
    assert hit["cached"] is True and hit["attempts"] == 0 and hit["sandbox_id"] is None
    assert hit["outputs"] == first["outputs"] and hit["success"]
    # Inputs are a set: their order is not part of the key.
    swapped = dict(body, inputs={"y": body["inputs"]["y"], "x": body["inputs"]["x"]})
    assert ok(d, **swapped)["cached"] is True
    # Anything that can change the result is: an input's value, env, the timeout is not.
    assert ok(d, **dict(body, inputs={**body["inputs"], "x": {"type": "int", "value": 2}}))["cached"] is False
    assert ok(d, **dict(body, env={"K": "v"}))["cached"] is False
    assert ok(d, **dict(body, timeout_ms=60000))["cached"] is True
    # Tenants never share entries.
    assert ok(d, token=B, **body)["cached"] is False
    # override runs and refills; disable neither reads nor writes.
    over = ok(d, cache="override", **body)
    assert over["cached"] is False and over["outputs"] != first["outputs"]
    assert ok(d, **body)["outputs"] == over["outputs"]
    off = ok(d, cache="disable", **body)
    assert off["cached"] is False and off["outputs"] != over["outputs"]
    assert ok(d, **body)["outputs"] == over["outputs"]
    # Only successes are cached: a failure or a missing output runs again.
    for bad in [dict(code=fresh() + "import sys; sys.exit(2)", cache="auto"),
                dict(code=fresh() + "pass", outputs={"z": "int"})]:
        assert ok(d, **bad)["cached"] is False
        assert ok(d, **bad)["cached"] is False
    # Command mode is cached too.
    cmd = dict(image="shell", command=["sh", "-c", "head -c8 /dev/urandom | od -An -tx1 > /var/outputs/o"],
               outputs={"o": "str"})
    a, b = ok(d, **cmd), ok(d, **cmd)
    assert b["cached"] and a["outputs"] == b["outputs"]


def test_cache_survives_a_restart(tmp_path):
    d = Daemon(args=("--pool-size", "0")).start()
    try:
        body = dict(image="python", code=fresh() + "import random\nr = random.random()",
                    outputs={"r": "float"})
        first = ok(d, token=None, **body)
        d.stop()
        d.start()
        again = ok(d, token=None, **body)
        assert again["cached"] and again["outputs"] == first["outputs"]
    finally:
        d.close()


def test_cache_hits_check_the_image(tmp_path):
    # An image taken out of the allowlist answers nothing, from the cache
    # neither.
    cfg = tmp_path / "cella.yaml"
    cfg.write_text("image_allowlist: [python, shell]\npool_size: 0\n")
    d = Daemon(config=str(cfg)).start()
    try:
        body = dict(image="python", code=fresh() + "r = 7", outputs={"r": "int"})
        assert ok(d, token=None, **body)["outputs"] == {"r": 7}
        assert ok(d, token=None, **body)["cached"] is True
        d.stop()
        cfg.write_text("image_allowlist: [shell]\npool_size: 0\n")
        d.start()
        st, b = run(d, token=None, **body)
        assert st == 400 and err_code(b) == "S100", (st, b)
        assert b["error"]["fix"]["context"].endswith("`create`")
        # Allowed again, the entry is still there.
        d.stop()
        cfg.write_text("image_allowlist: [python]\npool_size: 0\n")
        d.start()
        assert ok(d, token=None, **body)["cached"] is True
    finally:
        d.close()


def test_bad_requests(d):
    bad = [
        dict(code="1", inputs={"a/b": {"type": "int", "value": 1}}),
        dict(code="1", inputs={"..": {"type": "int", "value": 1}}),
        dict(code="1", inputs={".": {"type": "int", "value": 1}}),
        dict(code="1", inputs={"x" * 256: {"type": "int", "value": 1}}),
        dict(code="1", outputs={"a/": "int"}),
        dict(code="1", outputs={"": "int"}),
        # auto-IO: a name like the namespace's own would replace them.
        dict(code="1", inputs={"__builtins__": {"type": "int", "value": 1}}),
        dict(code="1", outputs={"__x": "int"}),
        dict(code="1", inputs={"x": {"type": "complex", "value": 1}}),
        dict(code="1", inputs={"x": {"type": "int", "value": "1"}}),
        dict(code="1", inputs={"x": {"type": "int", "value": 1.5}}),
        dict(code="1", inputs={"x": {"type": "int"}}),
        dict(code="1", inputs={"x": {"type": "int", "value": 1, "extra": 1}}),
        dict(code="1", inputs={"x": 1}),
        dict(code="1", inputs=[1]),
        dict(code="1", inputs={"x": {"type": "bool", "value": "true"}}),
        dict(code="1", inputs={"x": {"type": "datetime", "value": "2024-02-30T00:00:00"}}),
        dict(code="1", inputs={"x": {"type": "datetime", "value": 1700000000}}),
        dict(code="1", inputs={"x": {"type": "timedelta", "value": "P1Y"}}),
        dict(code="1", inputs={"x": {"type": "timedelta", "value": "soon"}}),
        dict(code="1", inputs={"x": {"type": "file", "value": {"content_b64": "***"}}}),
        dict(code="1", inputs={"x": {"type": "file", "value": "text"}}),
        dict(code="1", outputs={"a": "folder"}),
        dict(code="1", inputs={"x": {"type": "dir", "value": {"content_b64": ""}}}),
        dict(code="1", outputs={"a": 1}),
        dict(code="1", outputs={f"o{i}": "int" for i in range(65)}),
        dict(code="1", command=["ls"]),
        dict(lang="python", command=["ls"]),
        dict(command=[]),
        dict(command=[""]),
        dict(command="ls"),
        dict(command=["ls"], auto_io=True),
        dict(code="1", arguments=["x"]),
        dict(lang="shell", code="1", auto_io=True),
        dict(code="1", retries=11),
        dict(code="1", retries=-1),
        dict(code="1", cache="sometimes"),
        dict(code="1", auto_io="yes"),
        dict(code="1", outputs={"x": "int"}, unknown=1),
    ]
    for body in bad:
        st, b = run(d, **body)
        assert st == 400 and err_code(b) == "S001", (body, st, b)
    st, b = run(d, code="1", inputs={"a/b": {"type": "int", "value": 1}})
    assert "input name 'a/b'" in b["error"]["message"]
    st, b = run(d, code="1", outputs={"__x": "int"})
    assert "output name '__x'" in b["error"]["message"] and "auto_io" in b["error"]["message"]
    st, b = run(d, code="1", outputs={"x": "folder"})
    assert "outputs.x" in b["error"]["message"]
    st, b = run(d, code="1", inputs={"when": {"type": "datetime", "value": "yesterday"}})
    assert "inputs.when.value" in b["error"]["message"]
    # Step errors keep their code and name their step, as plain runs do.
    st, b = run(d, image="cobol", code="x = 1", outputs={"x": "int"})
    assert err_code(b) == "S100" and b["error"]["fix"]["context"].endswith("`create`")


def test_auth_and_tenants(d):
    body = dict(image="shell", command=["true"], outputs={"exit_code": "int"})
    for token in (None, "tok-nobody-0123456789abcdef"):
        st, b = run(d, token=token, **body)
        assert st == 401 and err_code(b) == "S005", (st, b)
    # A kept sandbox is its tenant's: another tenant cannot see, use or stop it.
    b = ok(d, keep_sandbox=True, **body)
    sid = b["sandbox_id"]
    try:
        st, _ = d.get(f"/v1/sandboxes/{sid}", token=B)
        assert st == 404
        st, x = d.exec(sid, token=B, argv=["true"])
        assert st == 404 and err_code(x) == "S002", x
        st, x = d.post(f"/v1/sandboxes/{sid}/fs/read", {"path": "/var/outputs/exit_code"},
                       token=B)
        assert st == 404
        st, _ = d.delete(f"/v1/sandboxes/{sid}", token=B)
        assert st == 404
        st, listing = d.get("/v1/sandboxes", token=B)
        assert sid not in [s["sandbox_id"] for s in listing["sandboxes"]]
        st, x = d.exec(sid, token=A, argv=["cat", "/var/outputs/exit_code"])
        assert st == 200 and x["stdout"] == "0"
    finally:
        d.delete(f"/v1/sandboxes/{sid}", token=A)


def test_step_errors(d):
    # write: a file where the sandbox user may not write.
    st, b = run(d, image="shell", command=["true"], files=[{"path": "/usr/evil", "content": "x"}],
                outputs={"exit_code": "int"})
    assert st >= 400 and err_code(b) == "S215", (st, b)
    fix = b["error"]["fix"]
    assert fix["context"].endswith("`write`") and fix["inner_code"] == "S215" and fix["sandbox_id"]
    # stage: an input whose place a file made a directory.
    st, b = run(d, image="shell", command=["true"],
                files=[{"path": "/var/inputs/x/inside", "content": "x"}],
                inputs={"x": {"type": "str", "value": "v"}})
    assert st >= 400 and err_code(b) == "S212", (st, b)
    assert b["error"]["fix"]["context"].endswith("`stage`"), b
    # (collect fails as a step only when the sandbox or the client goes away;
    # what the program left is an output problem, never a step error.)
    b = ok(d, image="shell", command=["sh", "-c", "mkdir -p /var/outputs/o/$(seq -s/ 300)"],
           outputs={"o": "dir"}, cache="disable")
    assert not b["success"] and "declared output 'o'" in b["outputs_error"], b


def test_plain_runs_and_iii_are_unchanged(d):
    # Without a typed field, /v1/run answers as before: no typed keys, lang required.
    b = ok(d, lang="python", code="print(1)")
    assert "outputs" not in b and "attempts" not in b and b["stdout"] == "1\n"
    st, b = run(d, code="print(1)")
    assert st == 400 and err_code(b) == "S001"
    # iii's sandbox::run knows none of the typed fields.
    st, b = d.post("/v1/trigger", {"function_id": "sandbox::run",
                                   "payload": {"image": "python", "lang": "python", "code": "1",
                                               "outputs": {"x": "int"}}}, token=A)
    assert st == 400 and b["code"] == "S001" and "outputs" in b["message"]


def test_custom_image_with_its_own_var(tmp_path):
    # An image's /var is mirrored entry by entry, so /var/inputs and
    # /var/outputs can be made beside its own entries.
    top = pathlib.Path(tempfile.mkdtemp(prefix="cella-images-", dir="/var/tmp"))
    os.chmod(top, 0o755)
    root = top / "rootfs"
    (root / "usr").mkdir(parents=True)
    (root / "var" / "lib").mkdir(parents=True)
    (root / "var" / "lib" / "marker").write_text("image var\n")
    (root / "var" / "inputs").mkdir()          # the sandbox's own wins
    for link, target in [("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")]:
        os.symlink(target, root / link)
    subprocess.run(["mount", "--bind", "-o", "ro", "/usr", str(root / "usr")], check=True)
    cfg = tmp_path / "cella.yaml"
    cfg.write_text(f"custom_images:\n  withvar: {root}\n")
    d = Daemon(config=str(cfg), args=("--pool-size", "0")).start()
    try:
        b = ok(d, token=None, image="withvar",
               command=["sh", "-c", "cat /var/lib/marker /var/inputs/x > /var/outputs/y"],
               inputs={"x": {"type": "str", "value": "staged"}}, outputs={"y": "str"})
        assert b["outputs"] == {"y": "image var\nstaged"}, b
    finally:
        d.close()
        subprocess.run(["umount", str(root / "usr")], check=False)
        subprocess.run(["rm", "-rf", str(top)], check=False)
