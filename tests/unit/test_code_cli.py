"""`cella code run|resume`: code mode from the command line, with host calls
answered as JSON lines on stdin, and runs dumped in one process and resumed
in another (CELLA_BIN names the binary)."""
import json
import os
import subprocess

import pytest

CELLA = os.environ.get("CELLA_BIN", "build/cella")


def cella(*args, stdin="", cwd=None):
    return subprocess.run([CELLA, "code", *args], input=stdin.encode(), capture_output=True,
                          timeout=60, cwd=cwd)


def out(p):
    return p.stdout.decode()


def err(p):
    return p.stderr.decode()


def lines(p):
    return [json.loads(l) for l in out(p).splitlines()]


def run_src(tmp_path, src, *args, stdin=""):
    f = tmp_path / "job.py"
    f.write_text(src)
    return cella("run", str(f), *args, stdin=stdin)


def answer(call_id, value):
    return json.dumps({"call_id": call_id, "value": value}) + "\n"


# ---- usage ----

def test_help():
    for args in (["--help"], ["run", "--help"], ["resume", "-h"]):
        p = cella(*args)
        assert p.returncode == 0, err(p)
        assert "Usage: cella code run FILE.py|-" in out(p)
        assert "Exit status" in out(p)


@pytest.mark.parametrize("args, msg", [
    ([], "Usage"),
    (["walk"], "unknown subcommand"),
    (["run"], "which file"),
    (["run", "a.py", "b.py"], "one file only"),
    (["run", "a.py", "--bogus"], "unknown option"),
    (["run", "a.py", "--limit", "speed=3"], "--limit speed=3"),
    (["run", "a.py", "--limit", "depth=0"], "not a positive number"),
    (["run", "a.py", "--input", "novalue"], "expected NAME=JSON"),
    (["resume", "x.dump", "--input", "a=1"], "unknown option"),
    (["run", "/nonexistent/job.py"], "No such file"),
    (["resume", "/nonexistent/job.dump"], "No such file"),
])
def test_usage_errors(args, msg):
    p = cella(*args)
    assert p.returncode == 2
    assert msg in err(p)


# ---- runs without host calls ----

def test_result_and_output():
    p = cella("run", "-", stdin="print('hi')\nprint('there', end='')\n[1, (2, 3), {4}]\n")
    assert p.returncode == 0, err(p)
    assert out(p) == 'hi\nthere\n=> [1,{"$tuple":[2,3]},{"$set":[4]}]\n'


def test_result_jsonl():
    p = cella("run", "-", "--jsonl", stdin="print('a')\nprint('b')\nx = 2 ** 70\nx\n")
    assert p.returncode == 0, err(p)
    ls = lines(p)
    assert {"output": "a\nb\n"} in ls or ls[:2] == [{"output": "a\n"}, {"output": "b\n"}]
    assert ls[-1]["status"] == "complete"
    assert ls[-1]["result"] == {"$int": str(2 ** 70)}
    assert isinstance(ls[-1]["duration_us"], int)


def test_python_error():
    p = cella("run", "-", stdin="x = 1\n\ny = x / 0\n")
    assert p.returncode == 1
    assert err(p).strip() == "ZeroDivisionError: division by zero (line 3)"
    p = cella("run", "-", "--jsonl", stdin="print('before')\nraise ValueError('bad')\n")
    assert p.returncode == 1
    ls = lines(p)
    assert ls[0] == {"output": "before\n"}
    assert ls[-1]["status"] == "error"
    assert ls[-1]["error"] == {"type": "ValueError", "message": "bad", "line": 2}


def test_syntax_error():
    p = cella("run", "-", stdin="x = (1,\n")
    assert p.returncode == 1
    assert err(p).startswith("SyntaxError")
    p = cella("run", "-", "--jsonl", stdin="class A: pass\n")
    assert p.returncode == 1
    assert lines(p)[-1]["error"]["type"] == "NotImplementedError"


def test_inputs():
    p = cella("run", "-", "--input", "n=5", "--input", 'm={"$tuple": [1, 2]}',
              stdin="n * 2, m\n")
    assert p.returncode == 0, err(p)
    assert out(p) == '=> {"$tuple":[10,{"$tuple":[1,2]}]}\n'
    p = cella("run", "-", "--input", "n=[1,", stdin="n\n")
    assert p.returncode == 1
    assert "ValueError" in err(p)


def test_limits():
    p = cella("run", "-", "--limit", "memory=1M", stdin="x = 'a' * 10000000\n")
    assert p.returncode == 1
    assert err(p).startswith("MemoryError")
    p = cella("run", "-", "--limit", "depth=50",
              stdin="def f(n):\n    return f(n + 1)\nf(0)\n")
    assert p.returncode == 1
    assert err(p).startswith("RecursionError")
    p = cella("run", "-", "--limit", "time_ms=100", stdin="while True:\n    pass\n")
    assert p.returncode == 1
    assert err(p).startswith("TimeoutError")


# ---- host calls ----

CALLS = """x = fetch(2, key='k')
print('got', x)
try:
    y = fetch(x)
except KeyError as e:
    y = 'missing ' + str(e)
(x, y)
"""


def test_calls_answered_on_stdin(tmp_path):
    p = run_src(tmp_path, CALLS, "--function", "fetch",
                stdin=answer(1, [1, {"$bytes": "AP8="}]) +
                json.dumps({"call_id": 2, "error": {"type": "KeyError", "message": "k"}}) + "\n")
    assert p.returncode == 0, err(p)
    o = out(p).splitlines()
    assert json.loads(o[0]) == {"call_id": 1, "function": "fetch", "args": [2],
                                "kwargs": {"key": "k"}}
    assert o[1] == "got [1, b'\\x00\\xff']"
    assert json.loads(o[2]) == {"call_id": 2, "function": "fetch",
                                "args": [[1, {"$bytes": "AP8="}]], "kwargs": {}}
    assert o[3] == '=> {"$tuple":[[1,{"$bytes":"AP8="}],"missing \'k\'"]}'


def test_undeclared_names_are_host_calls(tmp_path):
    p = run_src(tmp_path, "len(lookup('a'))\n", stdin=answer(1, "abc"))
    assert p.returncode == 0, err(p)
    o = out(p).splitlines()
    assert json.loads(o[0])["function"] == "lookup"
    assert o[1] == "=> 3"


def test_big_values_cross_intact(tmp_path):
    big = 123456789012345678901234567890
    p = run_src(tmp_path, "v = f()\n(v + 1, type(v).__name__)\n", "--jsonl",
                stdin='{"call_id": 1, "value": %d}\n' % big)
    assert p.returncode == 0, err(p)
    assert lines(p)[-1]["result"] == {"$tuple": [{"$int": str(big + 1)}, "int"]}


def test_call_line_starts_fresh(tmp_path):
    p = run_src(tmp_path, "print('partial', end='')\nf()\n", stdin=answer(1, None))
    assert p.returncode == 0, err(p)
    o = out(p).splitlines()
    assert o[0] == "partial"
    assert json.loads(o[1])["call_id"] == 1
    assert o[2] == "=> null"


def test_bad_answers_are_skipped(tmp_path):
    p = run_src(tmp_path, "f() + 1\n",
                stdin="not json\n" + answer(7, 1) + '{"call_id": 1, "value": tru}\n'
                + '{"call_id": 1}\n' + '{"call_id": 1, "value": 1, "extra": 2}\n'
                + "\n" + answer(1, 41))
    assert p.returncode == 0, err(p)
    assert out(p).splitlines()[-1] == "=> 42"
    e = err(p)
    assert e.count("answer ignored") == 3
    assert e.count("answer refused") == 2


def test_stdin_ends_with_calls_pending(tmp_path):
    p = run_src(tmp_path, "f()\n")
    assert p.returncode == 2
    assert "stdin ended" in err(p)


def test_gather_answered_in_any_order(tmp_path):
    src = "import asyncio\nr = await asyncio.gather(f(1), f(2), f(3))\nr\n"
    p = run_src(tmp_path, src, "--top-level-await", "--jsonl",
                stdin=answer(3, "c") + answer(1, "a") + answer(2, "b"))
    assert p.returncode == 0, err(p)
    ls = lines(p)
    assert [l["call_id"] for l in ls if "call_id" in l] == [1, 2, 3]
    assert ls[-1]["result"] == ["a", "b", "c"]


def test_host_call_limit(tmp_path):
    p = run_src(tmp_path, "f()\nf()\n", "--limit", "calls=1",
                stdin=answer(1, 1) + answer(2, 2))
    assert p.returncode == 1
    assert err(p).startswith("RuntimeError")


# ---- dump in one process, resume in another ----

TWO = """print('start')
a = fetch('a')
print('between', a)
b = fetch(a + 'b')
print('end')
[a, b]
"""


def test_dump_and_resume_across_processes(tmp_path):
    d1, d2 = tmp_path / "one.dump", tmp_path / "two.dump"
    p = run_src(tmp_path, TWO, "--dump-to", str(d1))
    assert p.returncode == 3, err(p)
    o = out(p).splitlines()
    assert o[0] == "start"
    assert json.loads(o[1]) == {"call_id": 1, "function": "fetch", "args": ["a"], "kwargs": {}}
    assert "paused" in err(p)
    assert d1.read_bytes()[:8] == b"CELLACD\x01"
    assert oct(d1.stat().st_mode & 0o777) == "0o600"

    p = cella("resume", str(d1), "--dump-to", str(d2), stdin=answer(1, "A"))
    assert p.returncode == 3, err(p)
    o = out(p).splitlines()
    # the pending call again, then only what follows it: "start" is not repeated
    assert json.loads(o[0])["call_id"] == 1
    assert o[1] == "between A"
    assert json.loads(o[2]) == {"call_id": 2, "function": "fetch", "args": ["Ab"], "kwargs": {}}
    assert len(o) == 3

    p = cella("resume", str(d2), "--jsonl", stdin=answer(2, "B"))
    assert p.returncode == 0, err(p)
    ls = lines(p)
    assert ls[0]["call_id"] == 2
    assert ls[1] == {"output": "end\n"}
    assert ls[-1]["status"] == "complete" and ls[-1]["result"] == ["A", "B"]

    # the first dump still resumes, with other answers
    p = cella("resume", str(d1), stdin=answer(1, "x") + answer(2, "y"))
    assert p.returncode == 0, err(p)
    assert out(p).splitlines()[-1] == '=> ["x","y"]'


def test_dump_jsonl_and_declared_functions(tmp_path):
    d = tmp_path / "j.dump"
    p = run_src(tmp_path, "n + fetch()\n", "--function", "fetch", "--input", "n=1",
                "--jsonl", "--dump-to", str(d))
    assert p.returncode == 3, err(p)
    ls = lines(p)
    assert ls == [{"call_id": 1, "function": "fetch", "args": [], "kwargs": {}}]
    assert "paused" in err(p)
    p = cella("resume", str(d), "--jsonl", stdin=answer(1, 2))
    assert p.returncode == 0, err(p)
    assert lines(p)[-1]["result"] == 3


def test_dump_uses_the_answers_stdin_holds(tmp_path):
    """A resumed run given answers to calls it makes later uses them, and
    stops only when stdin ends."""
    d1, d2 = tmp_path / "a.dump", tmp_path / "b.dump"
    src = "x = [f(i) for i in range(4)]\nx\n"
    p = run_src(tmp_path, src, "--dump-to", str(d1), stdin=answer(1, "a"))
    assert p.returncode == 3, err(p)
    assert [json.loads(l)["call_id"] for l in out(p).splitlines()] == [1, 2]
    p = cella("resume", str(d1), "--dump-to", str(d2), stdin=answer(2, "b") + answer(3, "c"))
    assert p.returncode == 3, err(p)
    assert [json.loads(l)["call_id"] for l in out(p).splitlines()] == [2, 3, 4]
    p = cella("resume", str(d2), stdin=answer(4, "d"))
    assert p.returncode == 0, err(p)
    assert out(p).splitlines()[-1] == '=> ["a","b","c","d"]'
    # stdin ending before the loaded calls are answered: dumped again
    d3 = tmp_path / "c.dump"
    p = cella("resume", str(d2), "--dump-to", str(d3))
    assert p.returncode == 3, err(p)
    p = cella("resume", str(d3), stdin=answer(4, "e"))
    assert out(p).splitlines()[-1] == '=> ["a","b","c","e"]'


def test_bad_dumps(tmp_path):
    p = run_src(tmp_path, "f()\n", "--dump-to", str(tmp_path / "ok.dump"))
    assert p.returncode == 3
    good = (tmp_path / "ok.dump").read_bytes()
    cases = {
        "empty": b"",
        "text": b"print('not a dump')\n",
        "truncated": good[:len(good) // 2],
        "flipped": good[:20] + bytes([good[20] ^ 1]) + good[21:],
        "longer": good + b"\0",
    }
    for name, data in cases.items():
        f = tmp_path / (name + ".dump")
        f.write_bytes(data)
        p = cella("resume", str(f), stdin=answer(1, 1))
        assert p.returncode == 2, name
        assert "ValueError" in err(p), name
