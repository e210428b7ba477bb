#!/usr/bin/python3
"""Code mode's parser against CPython's on a directory of sources (the fuzzer's
corpus, say: build-fuzz/corpus/code_parse): which sources one accepts and the
other refuses, and, among those both refuse with a syntax error, where the
exception type or line differs. Refusals (NotImplementedError) and limits are
not differences. Prints counts per kind of difference with an example file.

    scripts/code_vs_cpython.py DIR [--dump build/cella-code-dump]
"""
import argparse
import os
import subprocess
import sys
import warnings


def cella(dump, paths):
    out = {}
    for i in range(0, len(paths), 1000):
        r = subprocess.run([dump] + paths[i:i + 1000], capture_output=True, check=True)
        for line in r.stdout.decode("utf-8", "replace").split("\n"):
            if "\t" in line:
                path, rest = line.split("\t", 1)
                if rest.startswith("ERR "):
                    kind, line_no, msg = rest[4:].split(" ", 2)
                    out[path] = (kind, int(line_no), msg)
                else:
                    out[path] = ("OK", 0, "")
    return out


def cpython(path):
    with open(path, "rb") as f:
        src = f.read()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(src, path, "exec", dont_inherit=True)
        return ("OK", 0, "")
    except SyntaxError as e:
        return (type(e).__name__, e.lineno or 0, e.msg)
    except (ValueError, MemoryError, RecursionError) as e:
        return (type(e).__name__, 0, str(e))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--dump", default=os.path.join(os.path.dirname(__file__),
                                                   "../build/cella-code-dump"))
    args = ap.parse_args()
    paths = sorted(os.path.join(args.dir, f) for f in os.listdir(args.dir))
    mine = cella(args.dump, paths)
    kinds, both = {}, 0
    for p in paths:
        py, me = cpython(p), mine.get(p, ("?", 0, ""))
        if me[0] in ("NotImplementedError", "MemoryError", "RecursionError"):
            continue
        if py[0] == "OK" and me[0] != "OK":
            key = "cella refuses, CPython accepts: %s" % me[2]
        elif py[0] != "OK" and me[0] == "OK":
            key = "cella accepts, CPython refuses: %s" % py[2]
        elif py[0] == "OK":
            continue
        else:
            both += 1
            if me[0] != py[0]:
                key = "type: cella %s, CPython %s (%s)" % (me[0], py[0], py[2][:50])
            elif me[1] != py[1]:
                key = "line: cella '%s', CPython '%s'" % (me[2][:50], py[2][:50])
            else:
                continue
        kinds.setdefault(key, []).append(p)
    print("%d sources, %d refused by both; differences:" % (len(paths), both))
    for k, v in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        print("%6d  %s  e.g. %s" % (len(v), k, v[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
