# Unpacking (starred targets, nested targets, in for loops, in calls and
# displays) and the walrus operator.
a, *rest = [1, 2, 3, 4]
assert a == 1 and rest == [2, 3, 4]
*init, last = "abc"
assert init == ["a", "b"] and last == "c"
first, *mid, end = range(5)
assert (first, mid, end) == (0, [1, 2, 3], 4)
x, *empty, y = (1, 2)
assert empty == [] and (x, y) == (1, 2)
(p, q), [r, *s] = (1, 2), [3, 4, 5]
assert (p, q, r, s) == (1, 2, 3, [4, 5])
for i, (k, v) in enumerate({"a": 1, "b": 2}.items()):
    assert (k, v) == (["a", "b"][i], i + 1)
for head, *tail in [[1, 2, 3], [4]]:
    pass
assert head == 4 and tail == []
d = {}
d["k"], d["j"] = 1, 2
lst = [0, 0, 0]
lst[0], lst[2] = "a", "c"
assert d == {"k": 1, "j": 2} and lst == ["a", 0, "c"]
i = 0
lst2 = [10, 20]
i, lst2[i] = 1, 99
assert lst2 == [10, 99]
x = y = z = []
x.append(1)
assert y == [1] and z is x
assert [*range(3), *"ab"] == [0, 1, 2, "a", "b"] and (*[1], 2) == (1, 2)
assert {*[1, 2], *{3}} == {1, 2, 3} and {**{"a": 1}, **dict(b=2)} == {"a": 1, "b": 2}
def f(a, b, c):
    return a * 100 + b * 10 + c
assert f(*[1, 2], 3) == 123 and f(*(1,), **{"c": 3, "b": 2}) == 123
assert print(*[], sep="") is None
if (n := len("hello")) > 3:
    assert n == 5
data = [1, 5, 2, 8]
assert [y for v in data if (y := v * 2) > 4] == [10, 16] and y == 16
buf = iter([3, 2, 1, 0])
seen = []
while (item := next(buf)) != 0:
    seen.append(item)
assert seen == [3, 2, 1]
assert (w := 10) + w == 20
try:
    a, *b, c = [1]
    assert False
except ValueError as e:
    assert str(e) == "not enough values to unpack (expected at least 2, got 1)"
try:
    a, b = 1
    assert False
except TypeError as e:
    assert str(e) == "cannot unpack non-iterable int object"
(a, b), c = "xy", "z"
(a, b, c, n, [*"hi"])
# expect: ("x", "y", "z", 5, ["h", "i"])
