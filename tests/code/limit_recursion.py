# Unbounded recursion: RecursionError, as in CPython (depth 1000), and the
# run can catch it and go on.
def down(n):
    return down(n + 1)
try:
    down(0)
except RecursionError as e:
    caught = str(e)
assert caught == "maximum recursion depth exceeded"
def ping(n):
    return pong(n + 1)
def pong(n):
    return ping(n + 1)
ping(0)
# expect-error: RecursionError: maximum recursion depth exceeded
