# Assignment forms: augmented (every operator, on names, subscripts and
# nested subscripts, evaluated once), chained, annotated, swaps.
x = 10
x += 5; x -= 3; x *= 2; x //= 5; x **= 3; x %= 50; x <<= 2; x >>= 1; x |= 1; x &= 0b1111; x ^= 0b101
assert x == 8, x
y = 7
y /= 2
assert y == 3.5
s = "ab"
s += "c"
s *= 2
assert s == "abcabc"
lst = [1, 2, 3]
alias = lst
lst += [4]
assert alias == [1, 2, 3, 4] and alias is lst
tup = (1,)
tup_alias = tup
tup += (2,)
assert tup == (1, 2) and tup_alias == (1,)
d = {"k": 1, "n": {"m": [10]}}
d["k"] += 1
d["n"]["m"][0] *= 3
d.setdefault("new", 0)
d["new"] -= 1
assert d == {"k": 2, "n": {"m": [30]}, "new": -1}
calls = []
def key(k):
    calls.append(k)
    return k
counts = {"a": 0}
counts[key("a")] += 5
assert counts == {"a": 5} and calls == ["a"]
sets = {1, 2}
sets |= {3}
sets &= {2, 3, 4}
sets -= {2}
assert sets == {3}
a = b = c = 0
a += 1
assert (a, b, c) == (1, 0, 0)
n: int = 5
m: list
label: str = "x" * n
assert n == 5 and label == "xxxxx"
i, j = 0, 1
i, j = j, i + j
i, j = j, i + j
assert (i, j) == (1, 2)
grid = [[0, 0], [0, 0]]
for r in range(2):
    for q in range(2):
        grid[r][q] += r * 2 + q
total = 0
for row in grid:
    for v in row:
        total += v
(grid, total, x, d["n"])
# expect: ([[0, 1], [2, 3]], 6, 8, {"m": [30]})
