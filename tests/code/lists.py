# list: methods, mutation through aliases, sorting (stable, key, reverse),
# comparison, repr of nested and self-containing lists.
a = [3, 1, 2]
b = a
b.append(4)
assert a == [3, 1, 2, 4] and a is b and a[:] is not a
a.extend([5, 6])
a.insert(0, 0)
a.insert(100, 7)
a.insert(-1, 99)
assert a == [0, 3, 1, 2, 4, 5, 6, 99, 7]
assert a.pop() == 7 and a.pop(0) == 0 and a.pop(-2) == 6
a.remove(99)
assert a == [3, 1, 2, 4, 5] and a.index(4) == 3 and a.count(1) == 1
a.reverse()
assert a == [5, 4, 2, 1, 3]
a.sort()
assert a == [1, 2, 3, 4, 5]
a.sort(reverse=True)
assert a == [5, 4, 3, 2, 1]
words = ["banana", "Apple", "cherry", "date", "Fig"]
assert sorted(words) == ["Apple", "Fig", "banana", "cherry", "date"]
assert sorted(words, key=str.lower) == ["Apple", "banana", "cherry", "date", "Fig"]
assert sorted(words, key=len) == ["Fig", "date", "Apple", "banana", "cherry"]
assert sorted(words, key=lambda w: (-len(w), w)) == ["banana", "cherry", "Apple", "date", "Fig"]
pairs = [(1, "b"), (0, "a"), (1, "a"), (0, "b")]
assert sorted(pairs, key=lambda p: p[0]) == [(0, "a"), (0, "b"), (1, "b"), (1, "a")]
assert sorted(pairs) == [(0, "a"), (0, "b"), (1, "a"), (1, "b")]
c = a.copy()
c.clear()
assert c == [] and a == [5, 4, 3, 2, 1]
assert [1, 2] + [3] == [1, 2, 3] and [0] * 3 == [0, 0, 0] and [[]] * 2 == [[], []]
grid = [[0] * 3 for _ in range(2)]
grid[0][1] = 5
assert grid == [[0, 5, 0], [0, 0, 0]]
alias = [[0] * 2] * 2
alias[0][0] = 1
assert alias == [[1, 0], [1, 0]]
assert [1, 2, 3] < [1, 2, 4] and [1, 2] < [1, 2, 0] and [2] > [1, 9] and [] < [0]
assert [1, [2, 3]] == [1, [2, 3]] and [1, 2] != [2, 1] and [1.0] == [1]
assert 2 in [1, 2] and [2] in [[1], [2]] and 3 not in [1, 2]
d = [1, 2, 3]
d += [4]
d *= 2
assert d == [1, 2, 3, 4, 1, 2, 3, 4]
d[1] = "x"
d[-1] = "y"
assert d == [1, "x", 3, 4, 1, 2, 3, "y"]
assert list(range(3)) == [0, 1, 2] and list("ab") == ["a", "b"] and list((1, 2)) == [1, 2]
assert list({"k": 1, "j": 2}) == ["k", "j"]
assert len([None] * 10) == 10 and max([3, 9, 2]) == 9 and min([[2], [1, 5]]) == [1, 5]
r = [1, 2]
r.append(r)
assert repr(r) == "[1, 2, [...]]" and r[2] is r
nested = [1, [2, [3, [4, []]]], "s", (5,), {"k": [6]}]
assert str(nested) == "[1, [2, [3, [4, []]]], 's', (5,), {'k': [6]}]"
stack = []
for i in range(5):
    stack.append(i * i)
total = 0
while stack:
    total += stack.pop()
assert total == 30
try:
    [].pop()
    assert False
except IndexError as e:
    assert str(e) == "pop from empty list"
try:
    [1, 2][5]
    assert False
except IndexError as e:
    assert str(e) == "list index out of range"
try:
    [1, 2].index(7)
    assert False
except ValueError as e:
    assert str(e) == "7 is not in list"
try:
    [1].remove(2)
    assert False
except ValueError as e:
    assert str(e) == "list.remove(x): x not in list"
try:
    sorted([1, "a"])
    assert False
except TypeError as e:
    assert str(e) == "'<' not supported between instances of 'str' and 'int'"
key = "a"
try:
    [1, 2][key]
    assert False
except TypeError as e:
    assert str(e) == "list indices must be integers or slices, not str"
m = [5, 3, 8]
m.sort(key=lambda v: -v)
(m, sorted(m), sorted([3, 1, 2], reverse=True), [x * 2 for x in m][1:])
# expect: ([8, 5, 3], [3, 5, 8], [3, 2, 1], [10, 6])
