# cella-only
# limits: depth=50
# A lower depth limit: 40 nested calls run, 60 do not.
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
assert depth(40) == 40
depth(60)
# expect-error: RecursionError: maximum recursion depth exceeded
