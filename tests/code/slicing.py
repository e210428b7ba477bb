# Slices: read with every sign of start/stop/step, write (same size, other
# size, extended), on str, bytes, tuple, range; slice objects.
a = list(range(10))
assert a[2:5] == [2, 3, 4] and a[:3] == [0, 1, 2] and a[7:] == [7, 8, 9] and a[:] == a
assert a[-3:] == [7, 8, 9] and a[:-7] == [0, 1, 2] and a[-3:-1] == [7, 8]
assert a[::2] == [0, 2, 4, 6, 8] and a[1::3] == [1, 4, 7] and a[::-1] == list(range(9, -1, -1))
assert a[8:2:-2] == [8, 6, 4] and a[-1:-4:-1] == [9, 8, 7] and a[2:8:-1] == []
assert a[100:] == [] and a[-100:2] == [0, 1] and a[5:2] == [] and a[::-3] == [9, 6, 3, 0]
s = slice(1, 8, 3)
assert a[s] == [1, 4, 7] and s.start == 1 and s.stop == 8 and s.step == 3
assert slice(None, None, -1).indices(5) == (4, -1, -1) and slice(2, 100).indices(10) == (2, 10, 1)
b = a[:]
b[2:5] = ["x"]
assert b == [0, 1, "x", 5, 6, 7, 8, 9]
b[1:1] = [10, 11]
assert b == [0, 10, 11, 1, "x", 5, 6, 7, 8, 9]
b[::2] = [0] * 5
assert b == [0, 10, 0, 1, 0, 5, 0, 7, 0, 9]
b[-2:] = []
assert b == [0, 10, 0, 1, 0, 5, 0, 7]
b[:] = "ab"
assert b == ["a", "b"]
c = [1, 2, 3, 4, 5]
c[1:4] = range(2)
assert c == [1, 0, 1, 5]
c[len(c):] = [6]
assert c == [1, 0, 1, 5, 6]
try:
    c[::2] = [1, 2]
    assert False
except ValueError as e:
    assert str(e) == "attempt to assign sequence of size 2 to extended slice of size 3"
try:
    c[::0]
    assert False
except ValueError as e:
    assert str(e) == "slice step cannot be zero"
t = "abcdefgh"
assert t[1:7:2] == "bdf" and t[::-1] == "hgfedcba" and t[-2:] == "gh" and t[3:3] == ""
assert (1, 2, 3, 4)[1:3] == (2, 3) and b"abcd"[::-2] == b"db"
r = range(0, 20, 3)
assert r[1:4] == range(3, 12, 3) and list(r[::-1]) == [18, 15, 12, 9, 6, 3, 0] and r[-1] == 18
assert len(range(10, 0, -3)) == 4 and list(range(10, 0, -3)) == [10, 7, 4, 1]
m = [[1, 2, 3], [4, 5, 6]]
assert [row[1:] for row in m] == [[2, 3], [5, 6]] and m[1][::-1] == [6, 5, 4]
big = list(range(1000))
assert big[10 ** 20:] == [] and big[-(10 ** 20):3] == [0, 1, 2]
(a[3:6], a[::-4], t[-3::-1], (1, 2, 3)[::2])
# expect: ([3, 4, 5], [9, 5, 1], "fedcba", (1, 3))
