#!/usr/bin/python3
"""A stand-in for `cella code run|resume ... --jsonl` built on CPython, to test
the harness itself (its protocol handling and its dump/load mode) before and
apart from the interpreter:

    CELLA_BIN=tests/code/fake_cella.py /usr/bin/python3 -m pytest -q tests/code/run_code_tests.py

It speaks the CLI's JSON lines and exit codes. Host functions are the names
given with --function (or, with none, the names of host.py); a call prints a
call line and blocks on its answer, so calls made by asyncio.gather come one
at a time. --dump-to ends the process at the first unanswered call (exit 3);
the dump is the source, the options and the answers so far, and `resume`
runs the program again from the start, answering the recorded calls and
dropping the output already handed over: the same replay cella's dumps use.
Of the limits only time_ms and memory are approximated (a timer raising
TimeoutError, an address-space limit), so that every file ends; the
cella-only limit files are not expected to pass here."""

import argparse
import asyncio
import builtins
import json
import os
import resource
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import host  # noqa: E402
import run_code_tests as rct  # noqa: E402


class Paused(BaseException):
    """Raised through the program when a call cannot be answered here."""


class Session:
    def __init__(self, state, dump_to, real_stdout):
        self.state = state          # src, functions, tla, inputs, answers, out_len
        self.dump_to = dump_to
        self.out = real_stdout
        self.next_id = 1

    def emit(self, obj):
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()

    def call(self, name, args, kwargs):
        cid = self.next_id
        self.next_id += 1
        key = str(cid)
        if key not in self.state["answers"]:
            self.emit({"call_id": cid, "function": name, "args": rct.tag(list(args)),
                       "kwargs": rct.tag(dict(kwargs))})
            if self.dump_to:
                raise Paused()
            line = sys.stdin.readline()
            if not line:
                raise Paused()
            ans = json.loads(line)
            self.state["answers"][str(ans["call_id"])] = ans
        ans = self.state["answers"][key]
        if "error" in ans:
            typ = ans["error"]["type"]
            cls = getattr(builtins, typ, None)
            if not (isinstance(cls, type) and issubclass(cls, BaseException)):
                cls = type(typ, (Exception,), {})
            raise cls(ans["error"]["message"])
        return rct.decode(json.dumps(ans["value"]))

    def stub(self, name):
        if name in host.ASYNC:
            async def astub(*a, **k):
                return self.call(name, a, k)
            astub.__name__ = name
            return astub

        def sstub(*a, **k):
            return self.call(name, a, k)
        sstub.__name__ = name
        return sstub


def run(state, dump_to):
    real = sys.stdout
    sess = Session(state, dump_to, real)
    spec = rct.Spec.__new__(rct.Spec)
    spec.path, spec.src = state["path"], state["src"]
    spec.top_level_await = state["tla"]
    spec.inputs = state["inputs"]
    spec.functions = []
    names = state["functions"] or sorted(host.ALL)
    saved = dict(host.ALL)
    try:
        host.ALL.clear()
        host.ALL.update({n: sess.stub(n) for n in names})
        spec.functions = list(names)
        try:
            out = rct.run_python(spec)
        except Paused:
            out = None
    finally:
        host.ALL.clear()
        host.ALL.update(saved)
    return sess, out


def main():
    ap = argparse.ArgumentParser(prog="cella")
    sub = ap.add_subparsers(dest="group", required=True)
    code = sub.add_parser("code").add_subparsers(dest="cmd", required=True)
    r = code.add_parser("run")
    r.add_argument("file")
    r.add_argument("--input", action="append", default=[])
    r.add_argument("--function", action="append", default=[])
    r.add_argument("--limit", action="append", default=[])
    r.add_argument("--top-level-await", action="store_true")
    r.add_argument("--jsonl", action="store_true")
    r.add_argument("--dump-to")
    s = code.add_parser("resume")
    s.add_argument("dump")
    s.add_argument("--jsonl", action="store_true")
    s.add_argument("--dump-to")
    a = ap.parse_args()
    limits = dict(x.split("=", 1) for x in getattr(a, "limit", []))
    time_s = int(limits.get("time_ms", 10000)) / 1000
    memory = int(limits.get("memory", 0)) + (512 << 20)
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    # A regex backtracking in C never lets the timers' handlers run: the
    # kernel's CPU limit ends the process (no status line) a little later.
    cpu = int(time_s) + 5
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))

    def soft(signum, frame):
        raise TimeoutError("time limit (fake)")

    def hard(signum, frame):
        sys.__stdout__.write(json.dumps({"status": "error", "error": {
            "type": "TimeoutError", "message": "time limit (fake)", "line": None}}) + "\n")
        sys.__stdout__.flush()
        os._exit(1)
    signal.signal(signal.SIGALRM, soft)
    signal.signal(signal.SIGVTALRM, hard)
    signal.setitimer(signal.ITIMER_REAL, time_s)
    signal.setitimer(signal.ITIMER_VIRTUAL, time_s + 2)
    if a.cmd == "run":
        src = sys.stdin.read() if a.file == "-" else open(a.file, encoding="utf-8").read()
        state = {"path": os.path.abspath(a.file), "src": src, "functions": a.function,
                 "tla": a.top_level_await, "answers": {}, "out_len": 0,
                 "inputs": [tuple(x.split("=", 1)) for x in a.input]}
    else:
        with open(a.dump, encoding="utf-8") as f:
            state = json.load(f)
        state["inputs"] = [tuple(x) for x in state["inputs"]]
        for line in sys.stdin:
            if line.strip():
                ans = json.loads(line)
                state["answers"][str(ans["call_id"])] = ans
    sess, out = run(state, a.dump_to)
    if out is None:
        # Paused: run_python did not return the output so far, so a paused
        # step hands none over and the step that ends hands over all of it.
        with open(a.dump_to, "w", encoding="utf-8") as f:
            json.dump(state, f)
        return 3
    text = out.output[state["out_len"]:]
    if text:
        sess.emit({"output": text})
    if out.error:
        sess.emit({"status": "error", "error": {"type": out.error[0], "message": out.error[1],
                                                "line": out.error[2]}})
        return 1
    sess.emit({"status": "complete", "result": rct.tag(out.value, lenient=True), "duration_us": 0})
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except asyncio.CancelledError:
        sys.exit(1)
