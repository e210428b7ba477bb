# cella-only
# Catastrophic backtracking ((a+)+$ against 'aaa...b', 2**40 paths) would
# hang CPython; cella's re is bounded: a RuntimeError that the program can
# catch, quickly.
import re
try:
    re.match(r"(a+)+$", "a" * 40 + "b")
    outcome = "matched"
except RuntimeError:
    outcome = "bounded"
assert outcome == "bounded"
assert re.match(r"(a+)+$", "a" * 40) is not None
re.fullmatch(r"(\w+\s?)+$", "word " * 12 + "!")
# expect-error: RuntimeError
