# tuple: immutability, hashing, comparison, packing and unpacking, methods.
t = (1, "a", 2.5)
assert len(t) == 3 and t[1] == "a" and t[-1] == 2.5 and t[:2] == (1, "a")
assert (1,) == (1,) and (1) == 1 and () == tuple() and type(()) is tuple
assert tuple([1, 2]) == (1, 2) and tuple("ab") == ("a", "b") and tuple(range(2)) == (0, 1)
assert (1, 2) + (3,) == (1, 2, 3) and (0,) * 3 == (0, 0, 0)
assert (1, 2, 2, 3).count(2) == 2 and (1, 2, 3).index(3) == 2
assert (1, 2) < (1, 3) < (2,) and (1, 2) < (1, 2, 0) and (1, "b") > (1, "a")
assert hash((1, "a")) == hash((1, "a")) and {(1, 2): "v"}[(1, 2)] == "v"
assert repr((1,)) == "(1,)" and repr(()) == "()" and str((1, "x")) == "(1, 'x')"
packed = 1, 2, 3
x, y, z = packed
assert (x, y, z) == (1, 2, 3) and packed == (1, 2, 3)
a, b = 1, 2
a, b = b, a
assert (a, b) == (2, 1)
inner = [1]
holder = (inner, 2)
inner.append(2)
assert holder == ([1, 2], 2)
try:
    hash(holder)
    assert False
except TypeError as e:
    assert str(e) == "unhashable type: 'list'"
try:
    t[0] = 5
    assert False
except TypeError as e:
    assert str(e) == "'tuple' object does not support item assignment"
try:
    t[3]
    assert False
except IndexError as e:
    assert str(e) == "tuple index out of range"
try:
    x, y = (1, 2, 3)
    assert False
except ValueError as e:
    assert str(e) == "too many values to unpack (expected 2)"
try:
    x, y, z = (1, 2)
    assert False
except ValueError as e:
    assert str(e) == "not enough values to unpack (expected 3, got 2)"
nested = ((1, 2), (3, (4, 5)))
(p, q), (r, (s, u)) = nested
assert p + q + r + s + u == 15
assert sorted([(2, "b"), (1, "z"), (2, "a")]) == [(1, "z"), (2, "a"), (2, "b")]
assert max([(1, 9), (2, 0)]) == (2, 0) and (1, 2) == (1.0, 2.0) and (1, 2) != [1, 2]
assert 2 in (1, 2) and (1, 2) in [(1, 2)]
(t, (), (None,), tuple([[1], {"k": (2, 3)}]))
# expect: ((1, "a", 2.5), (), (None,), ([1], {"k": (2, 3)}))
