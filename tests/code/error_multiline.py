# An error inside a statement spread over several lines is reported, as in
# CPython 3.11, at the line of the failing part, not the statement's first.
def compute(*a):
    return a
data = {"a": 1}
ok = compute(
    1,
    data["a"],
)
assert ok == (1, 1)
result = compute(
    1,
    data["a"],
    data["missing"],
)
# expect-error: KeyError: 'missing'
