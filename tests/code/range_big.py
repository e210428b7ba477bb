# Ranges past 64 bits beyond hostile_range: slices, reversed, equality and
# hashes with ordinary ranges, index/count, and the errors CPython gives.
r = range(10 ** 20)
assert r[5:10] == range(5, 10) and r[-3:][0] == 10 ** 20 - 3 and bool(r)
assert list(reversed(range(10 ** 20, 10 ** 20 + 7, 3))) == [10 ** 20 + 6, 10 ** 20 + 3, 10 ** 20]
assert range(0, 1) == range(0, 1, 10 ** 20) and hash(range(0, 1)) == hash(range(0, 1, 10 ** 20))
assert r.index(10 ** 19 + 7) == 10 ** 19 + 7 and r.count(3) == 1 and 3.0 in range(0, 10 ** 20)
big = range(-2 ** 63, 2 ** 63 - 1)
assert big[-1] == 2 ** 63 - 2 and big.index(5) == 2 ** 63 + 5
seen = [i for i in range(2 ** 64, 2 ** 64 + 3)]
errors = []
for f in [lambda: len(big), lambda: list(r), lambda: r[10 ** 20], lambda: r[::0], lambda: r.index(-1),
          lambda: r["a"], lambda: range(0, 10 ** 20, 0)]:
    try:
        f()
    except Exception as e:
        errors.append(f"{type(e).__name__}: {e}")
(seen, str(range(-10 ** 20, 0, 7)), range(0, 10, 2 ** 62)[::4], errors)
# expect: ([18446744073709551616, 18446744073709551617, 18446744073709551618], 'range(-100000000000000000000, 0, 7)', range(0, 4611686018427387904, 18446744073709551616), ['OverflowError: Python int too large to convert to C ssize_t', 'OverflowError: Python int too large to convert to C ssize_t', 'IndexError: range object index out of range', 'ValueError: slice step cannot be zero', 'ValueError: -1 is not in range', 'TypeError: range indices must be integers or slices, not str', 'ValueError: range() arg 3 must not be zero'])
