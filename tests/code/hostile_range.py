# Huge numbers where CPython computes without materialising: ranges past
# 64 bits (indexing, membership, slicing work; len() overflows), modular
# powers with huge exponents.
r = range(10 ** 20)
assert r[-1] == 10 ** 20 - 1 and 10 ** 19 in r and -1 not in r and r[10 ** 19] == 10 ** 19
assert r[::10 ** 19][-1] == 9 * 10 ** 19 and range(0, 10 ** 30, 10 ** 29)[3] == 3 * 10 ** 29
try:
    len(r)
except OverflowError as e:
    assert str(e) == "Python int too large to convert to C ssize_t"
assert pow(2, 10 ** 100, 10 ** 9 + 7) == 314344290 and pow(3, 2 ** 200, 2 ** 61 - 1) > 0
(r[5], len(range(0, 10 ** 18, 10 ** 9)))
# expect: (5, 1000000000)
