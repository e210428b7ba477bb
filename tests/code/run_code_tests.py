"""The code-mode corpus: every tests/code/*.py file run under /usr/bin/python3
and under `cella code run`, which must agree (README.md in this directory).

For each corpus file NAME.py there are three tests:
  test_python[NAME]      /usr/bin/python3 runs it (in this process) and the
                         outcome matches the file's `# expect:` line;
  test_cella[NAME]       `cella code run NAME.py --jsonl`, host calls answered
                         from host.py; the outcome matches the expectation
                         and, unless the file is `# cella-only`, what
                         python3 did (value, printed output, error type,
                         message and line);
  test_cella_dump[NAME]  for a file that made host calls: the same run with
                         the process ending at every pause (`--dump-to`,
                         exit 3) and `cella code resume` in a new process
                         going on from the dump; it must end as the plain run.

The cella tests are skipped, with the reason, only while `cella code run
--help` fails (the interpreter not yet built); with
CODE_CORPUS_REQUIRE_CELLA=1 they fail instead. CELLA_BIN names the binary
(CTest sets it); otherwise build/cella of this tree.

Run: /usr/bin/python3 -m pytest -q tests/code/run_code_tests.py [-k NAME]
"""

import ast
import asyncio
import base64
import builtins
import contextlib
import glob
import inspect
import io
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import traceback

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import host  # noqa: E402

NOT_CORPUS = {"host.py", "run_code_tests.py", "conftest.py", "fake_cella.py"}
CELLA_TIMEOUT = 120          # seconds for one cella process
MAX_DUMP_STEPS = 2000


# ---- the file format -------------------------------------------------------

class Spec:
    """What a corpus file's comments say about it."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)[:-3]
        with open(path, encoding="utf-8") as f:
            self.src = f.read()
        lines = self.src.splitlines()
        self.cella_only = bool(lines) and lines[0].strip() == "# cella-only"
        self.limits = []           # ["time_ms=200", ...]
        self.functions = None      # None: no --function given
        self.top_level_await = False
        self.inputs = []           # [(name, tagged JSON text)]
        self.output = None         # the printed output, when the file says it
        self.problems = []
        for line in lines:
            s = line.strip()
            if not s.startswith("#"):
                if s:
                    break
                continue
            m = re.match(r"#\s*([a-z-]+):\s*(.*)$", s)
            key, val = (m.group(1), m.group(2).strip()) if m else (None, None)
            if key == "limits":
                for item in val.split():
                    if not re.fullmatch(r"(time_ms|memory|allocations|depth|calls|nesting)=\d+",
                                        item):
                        self.problems.append(f"bad limit {item!r}")
                    self.limits.append(item)
            elif key == "functions":
                self.functions = [x.strip() for x in val.split(",") if x.strip()]
                for fn in self.functions:
                    if fn not in host.ALL:
                        self.problems.append(f"function {fn!r} is not in host.py")
            elif key == "input":
                name, _, js = val.partition("=")
                self.inputs.append((name.strip(), js.strip()))
            elif key == "output":
                try:
                    self.output = json.loads(val)
                except ValueError:
                    self.problems.append(f"'# output:' needs a JSON string, not {val!r}")
            elif s == "# top-level-await":
                self.top_level_await = True
        self.expect = None         # a Python expression (text)
        self.expect_error = None   # (type, message or None)
        last = lines[-1].strip() if lines else ""
        if last.startswith("# expect:"):
            self.expect = last[len("# expect:"):].strip()
        elif last.startswith("# expect-error:"):
            typ, sep, msg = last[len("# expect-error:"):].strip().partition(": ")
            self.expect_error = (typ.strip(), msg if sep else None)
        else:
            self.problems.append("the last line is neither '# expect: ...' nor "
                                 "'# expect-error: ...'")

    def expected_value(self):
        # Repr("<function f>") stands for a value JSON cannot carry.
        return eval(self.expect, {"__builtins__": builtins, "Repr": Repr}, {})


def corpus():
    return sorted(p for p in glob.glob(os.path.join(HERE, "*.py"))
                  if os.path.basename(p) not in NOT_CORPUS)


SPECS = {os.path.basename(p)[:-3]: Spec(p) for p in corpus()}


# ---- tagged JSON (src/code/code_run.h) ------------------------------------

class Repr:
    """{"$repr": "..."}: a value JSON cannot carry (a function, a module)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return f"Repr({self.text!r})"


def _untag(obj):
    if len(obj) == 1:
        (k, v), = obj.items()
        if k == "$tuple":
            return tuple(v)
        if k == "$set":
            return set(v)
        if k == "$frozenset":
            return frozenset(v)
        if k == "$bytes":
            return base64.b64decode(v, validate=True)
        if k == "$int":
            return int(v)
        if k == "$float":
            return float(v)
        if k == "$dict":
            return {kk: vv for kk, vv in v}
        if k == "$repr":
            return Repr(v)
    return obj


def decode(text):
    return json.loads(text, object_hook=_untag)


def tag(v, lenient=False):
    """v as tagged JSON (a Python structure). Values JSON cannot carry raise
    TypeError, or with lenient become {"$repr": repr(v)}, as cella's results."""
    def t(x):
        return tag(x, lenient)
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return {"$int": str(v)} if abs(v) > 2**53 else v
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return {"$float": repr(v)}
        return v
    if isinstance(v, (bytes, bytearray)):
        return {"$bytes": base64.b64encode(bytes(v)).decode()}
    if isinstance(v, list):
        return [t(x) for x in v]
    if isinstance(v, tuple):
        return {"$tuple": [t(x) for x in v]}
    if isinstance(v, frozenset):
        return {"$frozenset": [t(x) for x in v]}
    if isinstance(v, set):
        return {"$set": [t(x) for x in v]}
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v) and not (len(v) == 1 and next(iter(v)).startswith("$")):
            return {k: t(x) for k, x in v.items()}
        return {"$dict": [[t(k), t(x)] for k, x in v.items()]}
    if lenient:
        return {"$repr": repr(v)}
    raise TypeError(f"a host value of type {type(v).__name__} cannot cross as JSON")


def encode(v):
    return json.dumps(tag(v), ensure_ascii=False, allow_nan=False)


def _strip_addr(text):
    return re.sub(r" at 0x[0-9a-fA-F]+", "", text)


def same(a, b):
    """Strict equality: types must match (1, 1.0 and True differ), dicts in
    insertion order, floats bit for bit apart from NaN; a Repr equals the
    value whose repr it is (addresses aside)."""
    if isinstance(a, Repr) or isinstance(b, Repr):
        ra = a.text if isinstance(a, Repr) else repr(a)
        rb = b.text if isinstance(b, Repr) else repr(b)
        return _strip_addr(ra) == _strip_addr(rb)
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return (len(a) == len(b)
                and all(same(ka, kb) and same(va, vb)
                        for (ka, va), (kb, vb) in zip(a.items(), b.items())))
    return a == b


# ---- outcomes ---------------------------------------------------------------

class Outcome:
    def __init__(self):
        self.value = None          # the last expression statement's value
        self.output = ""           # what print() wrote
        self.error = None          # (type, message, line)
        self.calls = []            # host calls made: (function, args, kwargs)
        self.log = []              # what happened, for failure messages

    def describe(self):
        if self.error:
            return f"error {self.error!r}, output {self.output!r}"
        return f"value {self.value!r}, output {self.output!r}"


def check_expectation(spec, out, who):
    if spec.output is not None:
        assert out.output == spec.output, f"{who} printed {out.output!r}, not {spec.output!r}"
    if spec.expect_error:
        typ, msg = spec.expect_error
        assert out.error is not None, f"{who}: expected {typ}, got {out.describe()}"
        assert out.error[0] == typ, f"{who}: expected {typ}, got {out.describe()}"
        if msg is not None:
            assert out.error[1] == msg, f"{who}: expected message {msg!r}, got {out.error[1]!r}"
    else:
        assert out.error is None, f"{who}: expected a value, got {out.describe()}"
        want = spec.expected_value()
        assert same(out.value, want), f"{who}: expected {want!r}, got {out.value!r}"


def check_agree(py, cel, who="cella"):
    assert cel.output == py.output, f"{who} printed {cel.output!r}, python3 {py.output!r}"
    if py.error:
        assert cel.error is not None, f"python3 raised {py.error!r}; {who} gave {cel.describe()}"
        assert cel.error[:2] == py.error[:2], f"python3 raised {py.error!r}, {who} {cel.error!r}"
        if py.error[2] and cel.error[2]:
            assert cel.error[2] == py.error[2], \
                f"python3 raised {py.error!r} on line {py.error[2]}, {who} on line {cel.error[2]}"
    else:
        assert cel.error is None, f"python3 gave {py.describe()}; {who} raised {cel.error!r}"
        assert same(cel.value, py.value), f"python3 gave {py.value!r}, {who} {cel.value!r}"


# ---- the python3 half --------------------------------------------------------

def _error_of(e, filename):
    if isinstance(e, SyntaxError):
        return (type(e).__name__, e.msg, e.lineno)
    line = None
    for fs in traceback.extract_tb(e.__traceback__):
        if fs.filename == filename:
            line = fs.lineno
    return (type(e).__name__, str(e), line)


def run_python(spec):
    out = Outcome()
    filename = spec.path
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if spec.top_level_await else 0
    g = {"__name__": "__main__", "__builtins__": builtins}
    names = spec.functions if spec.functions is not None else list(host.ALL)
    g.update({n: host.ALL[n] for n in names})
    for name, js in spec.inputs:
        g[name] = decode(js)
    buf = io.StringIO()
    try:
        tree = ast.parse(spec.src, filename)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = tree.body.pop()
        body = compile(tree, filename, "exec", flags)
        tail = compile(ast.Expression(last.value), filename, "eval", flags) if last else None

        async def main_async():
            r = eval(body, g)
            if inspect.iscoroutine(r):
                await r
            if tail is None:
                return None
            r = eval(tail, g)
            if tail.co_flags & inspect.CO_COROUTINE:
                r = await r
            return r

        with contextlib.redirect_stdout(buf):
            if flags:
                out.value = asyncio.run(main_async())
            else:
                eval(body, g)
                out.value = eval(tail, g) if tail else None
    except (Exception, RecursionError, MemoryError) as e:  # noqa: B014 (explicit)
        out.error = _error_of(e, filename)
    out.output = buf.getvalue()
    return out


# ---- the cella half ------------------------------------------------------------

def cella_bin():
    b = os.environ.get("CELLA_BIN")
    if b:
        return b
    return os.path.join(HERE, "..", "..", "build", "cella")


_cella_state = {}


def require_cella():
    """Skips (with the reason) while `cella code` is not built."""
    if "reason" not in _cella_state:
        b = cella_bin()
        reason = None
        if not os.access(b, os.X_OK):
            reason = f"no cella binary at {b} (set CELLA_BIN)"
        else:
            try:
                r = subprocess.run([b, "code", "run", "--help"], capture_output=True,
                                   timeout=30, stdin=subprocess.DEVNULL)
                if r.returncode != 0:
                    reason = ("`cella code run --help` fails (code mode not built yet): "
                              + (r.stderr or r.stdout).decode(errors="replace").strip()[:200])
            except (OSError, subprocess.TimeoutExpired) as e:
                reason = f"`cella code run --help` could not run: {e}"
        _cella_state["reason"] = reason
    if _cella_state["reason"]:
        # Once code mode is in the tree, CODE_CORPUS_REQUIRE_CELLA=1 (in
        # CTest's environment) turns this skip into a failure.
        if os.environ.get("CODE_CORPUS_REQUIRE_CELLA") == "1":
            pytest.fail(_cella_state["reason"])
        pytest.skip(_cella_state["reason"])
    return cella_bin()


def answer(msg):
    """The JSON line that answers one host-call line, from host.py."""
    cid = msg["call_id"]
    fn = host.ALL.get(msg["function"])
    try:
        if fn is None:
            raise NameError(f"name '{msg['function']}' is not defined")
        args = decode(json.dumps(msg.get("args", [])))
        kwargs = decode(json.dumps(msg.get("kwargs", {})))
        v = fn(*args, **kwargs)
        if inspect.iscoroutine(v):
            v = asyncio.run(v)
        return json.dumps({"call_id": cid, "value": tag(v)}, ensure_ascii=False)
    except Exception as e:  # the host's exception goes back to the program
        return json.dumps({"call_id": cid, "error": {"type": type(e).__name__,
                                                     "message": str(e)}})


def run_args(spec):
    a = [spec.path, "--jsonl"]
    for fn in spec.functions or []:
        a += ["--function", fn]
    for lim in spec.limits:
        a += ["--limit", lim]
    for name, js in spec.inputs:
        a += ["--input", f"{name}={js}"]
    if spec.top_level_await:
        a.append("--top-level-await")
    return a


def _take_line(out, line, answered, final):
    """One stdout line of `cella code ... --jsonl`; returns the answer line
    for a host call not yet answered, else None."""
    try:
        msg = json.loads(line)
    except ValueError:
        raise AssertionError(f"cella printed a line that is not JSON: {line!r}")
    assert isinstance(msg, dict), f"cella printed {line!r}"
    out.log.append(line)
    if "output" in msg:
        out.output += msg["output"]
    elif "call_id" in msg:
        assert "function" in msg, f"a call line without a function: {line!r}"
        if msg["call_id"] in answered:
            return None            # a resumed run listing its pending calls again
        answered.add(msg["call_id"])
        out.calls.append((msg["function"], msg.get("args"), msg.get("kwargs")))
        return answer(msg)
    elif "status" in msg:
        assert not final, f"two final lines: {line!r}"
        final.append(msg)
    else:
        raise AssertionError(f"cella printed an unknown line: {line!r}")
    return None


def _finish(out, final, rc, stderr):
    assert final, f"cella ended (exit {rc}) without a status line; stderr: {stderr[-2000:]}"
    st = final[0]
    if st["status"] == "complete":
        assert rc == 0, f"complete but exit {rc}"
        out.value = decode(json.dumps(st.get("result")))
    elif st["status"] == "error":
        assert rc == 1, f"error but exit {rc}; stderr: {stderr[-2000:]}"
        e = st["error"]
        out.error = (e.get("type"), e.get("message"), e.get("line"))
    else:
        raise AssertionError(f"unknown status line {st!r}")


def run_cella(spec):
    """One process, host calls answered as their lines arrive (several calls
    of a gather come before cella reads any answer: answering each at once
    is the same, the pipe holds them)."""
    b = require_cella()
    out = Outcome()
    answered, final = set(), []
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([b, "code", "run"] + run_args(spec), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=err, text=True, encoding="utf-8")
        try:
            for line in p.stdout:
                reply = _take_line(out, line, answered, final)
                if reply is not None:
                    try:
                        p.stdin.write(reply + "\n")
                        p.stdin.flush()
                    except BrokenPipeError:
                        pass
            rc = p.wait(timeout=CELLA_TIMEOUT)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            with contextlib.suppress(BrokenPipeError):
                p.stdin.close()
        err.seek(0)
        _finish(out, final, rc, err.read().decode(errors="replace"))
    return out


def run_cella_dumped(spec, tmp):
    """Every pause ends the process (exit 3); the next one resumes from the
    dump file with the answers on stdin."""
    b = require_cella()
    out = Outcome()
    answered, final = set(), []
    argv = [b, "code", "run"] + run_args(spec)
    stdin = ""
    for step in range(MAX_DUMP_STEPS):
        dump = os.path.join(tmp, f"d{step}")
        r = subprocess.run(argv + ["--dump-to", dump], input=stdin, capture_output=True,
                           text=True, encoding="utf-8", timeout=CELLA_TIMEOUT)
        replies = []
        for line in r.stdout.splitlines(keepends=True):
            reply = _take_line(out, line, answered, final)
            if reply is not None:
                replies.append(reply)
        if r.returncode != 3:
            _finish(out, final, r.returncode, r.stderr)
            out.log.append(f"{step + 1} processes")
            return out
        assert not final, f"exit 3 after a status line: {final!r}"
        assert os.path.getsize(dump) > 0, f"exit 3 but no dump at {dump}"
        argv = [b, "code", "resume", dump, "--jsonl"]
        stdin = "".join(x + "\n" for x in replies)
    raise AssertionError(f"still paused after {MAX_DUMP_STEPS} processes")


# ---- the tests --------------------------------------------------------------------

_py_cache, _cella_cache = {}, {}


def python_outcome(spec):
    if spec.name not in _py_cache:
        _py_cache[spec.name] = run_python(spec)
    return _py_cache[spec.name]


def cella_outcome(spec):
    if spec.name not in _cella_cache:
        _cella_cache[spec.name] = run_cella(spec)
    return _cella_cache[spec.name]


NAMES = sorted(SPECS)


def test_corpus_is_wellformed():
    assert NAMES, "no corpus files"
    bad = {n: SPECS[n].problems for n in NAMES if SPECS[n].problems}
    assert not bad, bad


@pytest.mark.parametrize("name", NAMES)
def test_python(name):
    spec = SPECS[name]
    if spec.cella_only:
        pytest.skip("cella-only")
    assert not spec.problems, spec.problems
    check_expectation(spec, python_outcome(spec), "python3")


@pytest.mark.parametrize("name", NAMES)
def test_cella(name):
    spec = SPECS[name]
    assert not spec.problems, spec.problems
    out = cella_outcome(spec)
    check_expectation(spec, out, "cella")
    if not spec.cella_only:
        check_agree(python_outcome(spec), out)


@pytest.mark.parametrize("name", NAMES)
def test_cella_dump(name, tmp_path):
    spec = SPECS[name]
    assert not spec.problems, spec.problems
    first = cella_outcome(spec)
    if not first.calls:
        pytest.skip("no host calls")
    out = run_cella_dumped(spec, str(tmp_path))
    check_expectation(spec, out, "cella (dump/load)")
    check_agree(first, out, "cella (dump/load)")
    assert [c[0] for c in out.calls] == [c[0] for c in first.calls], \
        f"calls differ: {out.calls!r} vs {first.calls!r}"


if __name__ == "__main__":
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", __file__] + sys.argv[1:]))
