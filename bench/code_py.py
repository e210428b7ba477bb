"""The CPython side of cella-bench-code (bench/code.c): runs the workloads
of the JSON file given as argv[1] inside /usr/bin/python3 and prints, per
workload, NAME \\t MICROSECONDS \\t RESULT-JSON (the median of the runs; per
run for "tiny" and "run" workloads, per host call for "host" ones).

A run is what cella's is: compile the source, execute it in fresh globals,
and take the value of the last line (an expression). The host function f of
"host" workloads is a plain Python function, so its figure is the floor: a
call that never leaves the interpreter."""

import json
import sys
import time


def host_f(x):
    return x + 1


def one_run(body, tail, host):
    g = {"__name__": "__main__"}
    if host:
        g["f"] = host_f
    exec(compile(body, "<code>", "exec"), g)
    return eval(compile(tail, "<code>", "eval"), g)


def measure(w, runs):
    src = w["src"]
    body, _, tail = src.rpartition("\n")
    host = w["kind"] == "host"
    result = one_run(body, tail, host)            # warm-up, and the value
    times = []
    for _ in range(runs):
        n = w["iters"] if w["kind"] == "tiny" else 1
        t0 = time.perf_counter_ns()
        for _ in range(n):
            one_run(body, tail, host)
        dt = (time.perf_counter_ns() - t0) / 1000
        times.append(dt / (w["iters"] if w["kind"] in ("tiny", "host") else 1))
    times.sort()
    mid = len(times) // 2
    med = times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2
    return med, result


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    print(f"#version\t{sys.version.split()[0]}", flush=True)
    for w in spec["workloads"]:
        try:
            us, result = measure(w, spec["runs"])
            print(f"{w['name']}\t{us:.4f}\t{json.dumps(result)}", flush=True)
        except Exception as e:  # reported in the table, not fatal
            print(f"{w['name']}\tERROR\t{type(e).__name__}: {e}", flush=True)


if __name__ == "__main__":
    main()
