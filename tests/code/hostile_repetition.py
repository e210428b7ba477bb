# Repetition: big but reasonable results are fine; a terabyte is a
# MemoryError at once (CPython too), never an attempt; negative counts
# give empty results.
s = "ab" * 500000
l = [0] * 1000000
t = (1, 2) * 1000
assert len(s) == 1000000 and len(l) == 1000000 and len(t) == 2000
assert "x" * -5 == "" and [1] * -1 == [] and b"z" * 0 == b""
caught = []
for make in (lambda: "x" * 2 ** 40, lambda: [None] * 2 ** 40, lambda: b"y" * 2 ** 40,
             lambda: "ab" * 2 ** 39):
    try:
        make()
        caught.append("made")
    except MemoryError:
        caught.append("MemoryError")
try:
    "x" * 2 ** 64
except OverflowError as e:
    caught.append(str(e))
caught
# expect: ["MemoryError", "MemoryError", "MemoryError", "MemoryError", "cannot fit 'int' into an index-sized integer"]
