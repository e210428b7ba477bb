# cella-only
# output: ""
# Refused when compiled, before anything runs: nothing is printed.
print('compiled and ran')
x = 1
class Point:
    pass
# expect-error: NotImplementedError: class definitions are not supported; use dicts or tuples
