# set and frozenset: operators, methods, hashing, comprehension; the order
# of a set of strings is not compared (only sorted views of it).
s = {3, 1, 2}
s.add(2)
s.add(4)
assert len(s) == 4 and 4 in s and 5 not in s and s == {1, 2, 3, 4}
s.discard(10)
s.remove(4)
assert s == {1, 2, 3}
a, b = {1, 2, 3}, {3, 4}
assert a | b == {1, 2, 3, 4} and a & b == {3} and a - b == {1, 2} and a ^ b == {1, 2, 4}
assert a.union([9]) == {1, 2, 3, 9} and a.intersection((1, 5)) == {1} and a.difference({1}) == {2, 3}
assert a.symmetric_difference([3, 5]) == {1, 2, 5}
assert {1, 2} <= a and {1, 2} < a and not a < a and a >= {1} and a.issubset(range(5))
assert a.isdisjoint({7, 8}) and not a.isdisjoint({3})
c = set(a)
c |= {10}
c &= {1, 10}
c -= {1}
assert c == {10}
c ^= {10, 11}
assert c == {11}
c.update([5, 6], {7})
assert sorted(c) == [5, 6, 7, 11]
p = c.pop()
assert p not in c and len(c) == 3
c.clear()
assert c == set() and repr(c) == "set()" and repr(frozenset()) == "frozenset()"
f = frozenset([1, 2, 2])
assert f == {1, 2} and hash(f) == hash(frozenset({2, 1})) and {f: "x"}[frozenset([1, 2])] == "x"
assert type(f | {3}) is frozenset and type({3} | f) is set
assert repr({1}) == "{1}" and repr(frozenset([1])) == "frozenset({1})"
assert {1, 1.0, True} == {1} and len({1, 1.0, True}) == 1
assert set("hello") == {"h", "e", "l", "o"} and sorted(set("hello")) == ["e", "h", "l", "o"]
assert {x % 3 for x in range(10)} == {0, 1, 2}
assert set() == frozenset() and {1, 2} == frozenset([1, 2])
seen, uniq = set(), []
for w in ["b", "a", "b", "c", "a"]:
    if w not in seen:
        seen.add(w)
        uniq.append(w)
assert uniq == ["b", "a", "c"]
try:
    s.remove(99)
    assert False
except KeyError as e:
    assert str(e) == "99"
try:
    {[1]}
    assert False
except TypeError as e:
    assert str(e) == "unhashable type: 'list'"
try:
    set().pop()
    assert False
except KeyError as e:
    assert str(e) == "'pop from an empty set'"
try:
    f.add(3)
    assert False
except AttributeError as e:
    assert str(e) == "'frozenset' object has no attribute 'add'"
({1, 2, 3}, frozenset({4}), set(), {(1, 2)}, sorted({"b", "a"}))
# expect: ({1, 2, 3}, frozenset({4}), set(), {(1, 2)}, ["a", "b"])
