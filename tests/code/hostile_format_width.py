# cella-only
# limits: memory=50000000
# A format width of a billion under a 50 MB heap: MemoryError, caught or not.
try:
    s = f"{1:>1000000000}"
except MemoryError:
    s = "refused"
assert s == "refused"
"{:^2000000000}".format("x")
# expect-error: MemoryError
