# Data nested 100000 deep, built by a loop (no deep source): repr, ==,
# json.dumps and str raise RecursionError, as in CPython, instead of
# overflowing the C stack; the run catches each and goes on; freeing it at
# the end must not recurse either.
a = []
b = []
for i in range(100000):
    a = [a]
    b = [b]
msgs = []
for op in (lambda: repr(a), lambda: a == b, lambda: str(a)):
    try:
        op()
        msgs.append("no error")
    except RecursionError as e:
        msgs.append(str(e))
import json
try:
    json.dumps(a)
except RecursionError as e:
    msgs.append(str(e))
d = {}
for i in range(100000):
    d = {"k": d}
try:
    repr(d)
except RecursionError as e:
    msgs.append(str(e))
depth, cur = 0, a
while cur:
    cur = cur[0]
    depth += 1
assert depth == 100000
msgs
# expect: ["maximum recursion depth exceeded while getting the repr of an object", "maximum recursion depth exceeded in comparison", "maximum recursion depth exceeded while getting the repr of an object", "maximum recursion depth exceeded while encoding a JSON object", "maximum recursion depth exceeded while getting the repr of an object"]
