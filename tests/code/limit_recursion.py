# Unbounded recursion: RecursionError, as in CPython (depth 1000), and the
# run can catch it and go on; uncaught, it ends the run at the line of the
# recursive call.
def ping(n):
    return pong(n + 1)
def pong(n):
    return ping(n + 1)
try:
    ping(0)
except RecursionError as e:
    caught = str(e)
assert caught == "maximum recursion depth exceeded"
def deep_sum(n):
    return 0 if n == 0 else n + deep_sum(n - 1)
assert deep_sum(500) == 125250
def down(n):
    return down(n + 1)
down(0)
# expect-error: RecursionError: maximum recursion depth exceeded
